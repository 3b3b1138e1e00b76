import BeaconPayload
import Foundation

/// What the firmware must do with the radio, from the on-air model and stackfree-ble.md §3–5,
/// and the check of a simulation trace against it.
struct RadioExpectation {
    /// The 38-byte PDU the image carries.
    var pdu: [UInt8]
    /// The fallback build: CRC and whitening computed in firmware.
    var prewhitened = false
    /// The TXPOWER value the firmware must write.
    var txPowerRegister: UInt8 = 0xE1
    /// The advertising interval in sleep-timer ticks.
    var intervalTicks = templateIntervalTicks
    /// The bench build that routes the radio's bit stream to P1.0/P1.1.
    var sniff = false
    /// Advertising events a `-DSIM` build runs before it stops (`SIM_EVENTS`).
    var events = 4

    /// The PRF_CHAN value per advertising channel: MHz above 2379 (2402, 2426, 2480 MHz).
    static let frequencies: [Int: UInt8] = [37: 0x17, 38: 0x2F, 39: 0x65]
    /// The template's interval: 100 ms in ticks of the 32.753 kHz RC oscillator, rounded up
    /// (3275.3; 3275 would be 99.99 ms, under the Bluetooth 4.x minimum for ADV_NONCONN_IND).
    static let templateIntervalTicks = 3276
    /// Random advDelay span per event in ticks (0–10 ms).
    static let delaySpan = 328
    /// Where `enter_power_mode` puts `MOV PCON,#1` (pm_entry.asm); the CPU goes on 3 bytes later.
    static let powerModeEntry = 0x7EF0

    /// The FIFO entry for `channel`: length byte and the bytes the radio sends.
    func fifo(channel: Int) -> [UInt8] {
        guard prewhitened else { return [UInt8(pdu.count)] + pdu }
        let packet = AdvertisingAirPacket.whiten(pdu + AdvertisingAirPacket.crc24(pdu), channel: channel)
        return [UInt8(packet.count)] + packet
    }

    /// The writes to the watched registers, as lines, in the order the firmware must make them.
    var expectedSequence: [String] {
        var lines = ["CLKCONCMD 80", "TXPOWER \(hex(txPowerRegister))"]
        for event in 1...events {
            // OBSSEL0/1 are lost in PM2 (SWRU191F p. 69), so the bench build routes the tap to
            // P1.0/P1.1 again at the start of every event, not once at boot.
            if sniff { lines += ["OBSSEL0 FB", "OBSSEL1 FC"] }
            lines.append("LLECTRL 01")
            for channel in AdvertisingAirPacket.channels {
                lines += [
                    "RFST 91", "FIFO \(fifo(channel: channel).map(hex).joined(separator: " "))",
                    "RFST 09 on PRF_CHAN \(hex(Self.frequencies[channel]!)) PRF_W_INIT \(hex(UInt8(0x40 | channel)))",
                ]
            }
            lines += ["LLECTRL 00", "ST2", "ST1", "ST0"]
            // The simulation build stops after the last event's compare, before it would sleep.
            if event < events { lines += ["SLEEPCMD 06", "PCON 01"] }
        }
        return lines
    }

    /// The trace's writes as lines comparable with `expectedSequence`: FIFO bytes gathered per
    /// packet, PRF_CHAN and PRF_W_INIT shown with the CMD_TX they apply to, sleep-timer values
    /// left out (`sleepTimerProblems` checks them).
    static func sequence(of trace: SimulationTrace) -> [String] {
        var lines: [String] = []
        var channel: UInt8?
        var whitening: UInt8?
        var fifo: [UInt8]?
        for write in trace.writes {
            switch write.register {
            case "PRF_CHAN": channel = write.value
            case "PRF_W_INIT": whitening = write.value
            case "RFD": fifo = (fifo ?? []) + [write.value]
            case "RFST":
                if let bytes = fifo { lines.append("FIFO \(bytes.map(hex).joined(separator: " "))") }
                fifo = nil
                if write.value == 0x09 {
                    lines.append(
                        "RFST 09 on PRF_CHAN \(channel.map(hex) ?? "--") PRF_W_INIT \(whitening.map(hex) ?? "--")")
                } else {
                    lines.append("RFST \(hex(write.value))")
                }
            case "ST2", "ST1", "ST0": lines.append(write.register)
            default: lines.append(write.description)
            }
        }
        if let bytes = fifo { lines.append("FIFO \(bytes.map(hex).joined(separator: " ")) (never sent)") }
        return lines
    }

    /// Every way the trace departs from this expectation.
    func problems(in trace: SimulationTrace) -> [String] {
        var problems: [String] = []
        if !trace.stoppedItself { problems.append("the firmware did not stop the simulation itself") }
        problems += sequenceProblems(trace)
        problems += powerModeProblems(trace)
        problems += sleepTimerProblems(trace)
        problems += registerProblems(trace)
        return problems
    }

    func sequenceProblems(_ trace: SimulationTrace) -> [String] {
        let actual = Self.sequence(of: trace)
        let expected = expectedSequence
        for index in 0..<max(actual.count, expected.count) {
            let found = index < actual.count ? actual[index] : "(nothing)"
            let wanted = index < expected.count ? expected[index] : "(nothing)"
            if found != wanted {
                return ["write \(index + 1): expected \(wanted), found \(found)"]
            }
        }
        return []
    }

    /// The CPU must go on after `MOV PCON,#1` at an address that is not a multiple of 4 (UG p. 63),
    /// and the sleep-timer interrupt must be enabled (IEN0.EA and .STIE) with its flag clear.
    func powerModeProblems(_ trace: SimulationTrace) -> [String] {
        var problems: [String] = []
        if trace.finalSFR[0xA8].map({ $0 & 0xA0 == 0xA0 }) != true {
            problems.append(
                "IEN0 is \(trace.finalSFR[0xA8].map(hex) ?? "unread"): EA and STIE must be set to wake from PM2")
        }
        if trace.finalSFR[0xC0].map({ $0 & 0x80 == 0 }) != true {
            problems.append(
                "IRCON is \(trace.finalSFR[0xC0].map(hex) ?? "unread"): STIF must be cleared before sleeping")
        }
        return problems
            + trace.writes.filter { $0.register == "PCON" }.compactMap { write in
                guard let next = write.resumeAddress else { return "PCON write without a resume address" }
                if next != Self.powerModeEntry + 3 {
                    return "after PCON the CPU went on at \(String(format: "0x%04X", next)), not 0x7EF3"
                }
                return next % 4 == 0 ? "the instruction after PCON starts on a 4-byte boundary" : nil
            }
    }

    /// Each compare is the previous one plus the interval plus advDelay (0–327 ticks), modulo 2^24,
    /// starting from the timer's value at boot; the delays must vary.
    func sleepTimerProblems(_ trace: SimulationTrace) -> [String] {
        let timer = trace.writes.filter { ["ST2", "ST1", "ST0"].contains($0.register) }
        guard timer.count == events * 3 else { return ["\(timer.count) sleep-timer writes, expected \(events * 3)"] }
        var problems: [String] = []
        var previous = S51.initialSleepTimer
        var delays: [Int] = []
        for event in 0..<events {
            let triple = Array(timer[(event * 3)..<(event * 3 + 3)])
            let compare = Int(triple[0].value) << 16 | Int(triple[1].value) << 8 | Int(triple[2].value)
            let delay = ((compare - previous) & 0xFF_FFFF) - intervalTicks
            if !(0..<Self.delaySpan).contains(delay) {
                problems.append(
                    "event \(event + 1): compare \(String(format: "0x%06X", compare)) is \(delay) ticks off the interval \(intervalTicks) from \(String(format: "0x%06X", previous))"
                )
            }
            delays.append(delay)
            previous = compare
        }
        if Set(delays).count == 1 { problems.append("advDelay is the same every event (\(delays[0]) ticks)") }
        return problems
    }

    /// The radio's registers after the run, against stackfree-ble.md §3.2 and §3.3. Radio RAM page 0
    /// must be cleared apart from the values set; XREGs the firmware has no business writing must
    /// still hold the simulation's fill byte.
    func registerProblems(_ trace: SimulationTrace) -> [String] {
        var expected: [Int: UInt8] = [
            0x6180: 0x40,  // FRMCTRL0: LSB first, CRC over the FIFO bytes
            0x6186: txPowerRegister,  // TXPOWER
            0x6187: 0x19,  // TXCTRL
            0x6190: 0x04,  // MDMCTRL0: GFSK 1 Mbps, 250 kHz
            0x6192: 0x00,  // MDMCTRL2: sync word LSB first, automatic preamble, 1 byte
            0x6194: 0x00,  // SW_CONF: one 32-bit sync word
            0x6195: 0xD6, 0x6196: 0xBE, 0x6197: 0x89, 0x6198: 0x8E,  // SW0..3: access address 0x8E89BED6
            0x61B1: 0x00,  // LLECTRL: off before sleep
            0x61BC: 0x03,  // TXFILTCFG
            0x61C0: 0x00,  // RFRAMCFG: page 0 at 0x6000
            0x61E0: 0x00, 0x61E1: 0x5B, 0x61E2: 0x06, 0x61E3: 0x00,  // BSP_P0..3: CRC-24 polynomial 0x00065B
            0x61E9: prewhitened ? 0x00 : 0x01,  // BSP_MODE: PN7 whitening in hardware (not in the fallback)
            0x6265: 0x1B,  // IVCTRL
            0x6000: 0x65,  // PRF_CHAN: the last packet went on channel 39
            0x6001: 0x00, 0x6002: 0x00, 0x6003: 0x00,  // PRF_TASK_CONF, PRF_FIFO_CONF, PRF_PKT_CONF
            0x6004: prewhitened ? 0 : 3,  // PRF_CRC_LEN
            0x6008: 0x00, 0x6009: 0x55, 0x600A: 0x55, 0x600B: 0x55,  // PRF_CRC_INIT: 0x555555
            0x600C: 0x67,  // PRF_W_INIT: 0x40 | 39
            0x6018: 0x00,  // PRF_ADDR_ENTRY0.CONF: free the entry after sending
            0x607E: 0x00,  // PRF_RADIO_CONF
        ]
        if sniff {
            // §3.2's bench settings: MDMCTRL3 |= 0x08 (sniff the bit-stream processor's output),
            // RFC_OBS_CTRL0/1 = sniff data/clock, OBSSEL0/1 route them to P1.0/P1.1.
            expected[0x6193] = S51.unwrittenFill | 0x08
            expected[0x61AE] = 0x07
            expected[0x61AF] = 0x08
            expected[0x6243] = 0xFB
            expected[0x6244] = 0xFC
        }
        for address in 0x6000..<0x6080 where expected[address] == nil { expected[address] = 0x00 }
        for address in 0x6180..<0x6200 where expected[address] == nil { expected[address] = S51.unwrittenFill }
        for address in 0x6240..<0x6248 where expected[address] == nil { expected[address] = S51.unwrittenFill }
        var problems: [String] = []
        for (address, value) in expected.sorted(by: { $0.key < $1.key }) {
            let found = trace.finalXDATA[address]
            if found != value {
                problems.append(
                    "XDATA \(String(format: "0x%04X", address)): expected \(hex(value)), found \(found.map(hex) ?? "nothing")"
                )
            }
        }
        return problems
    }
}

func hex(_ byte: UInt8) -> String { String(format: "%02X", byte) }
