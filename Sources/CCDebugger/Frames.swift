import HexText

/// Builders for the bulk OUT frames of the CC Debugger protocol (cc-debugger-protocol.md §3).
///
/// A bulk transfer is a concatenation of frames: one debugger header byte plus one CC
/// debug-interface command. Only the header values the reference client uses, in the contexts it
/// uses them, are emitted here (§12: "do not invent new header values").
public enum Frames {
    /// Vendor control requests (§2).
    public enum Request {
        /// 8 bytes: target ID, firmware ID and revision.
        public static let getState: UInt8 = 0xC0
        /// wValue 1 = slow, 0 = fast debug-interface speed.
        public static let setSpeed: UInt8 = 0xCF
        /// First step of connecting to the target.
        public static let prepareDebugMode: UInt8 = 0xC5
        /// Display text for the evaluation boards' LCD.
        public static let setChipInfo: UInt8 = 0xC8
        /// wIndex 1 = reset into debug mode (halted), 0 = reset and run.
        public static let reset: UInt8 = 0xC9
        /// Sent before a code-space read session; 1 byte back.
        public static let prepareRead: UInt8 = 0xC6
    }

    /// Debug status bits (§4.3).
    public enum Status {
        /// A chip erase is running.
        public static let chipEraseBusy: UInt8 = 0x80
        /// The CPU is halted (expected after reset into debug mode).
        public static let cpuHalted: UInt8 = 0x20
        /// The debug interface is locked.
        public static let debugLocked: UInt8 = 0x04
    }

    /// T1: read the debug status (1 byte back).
    public static let readStatus: [UInt8] = [0x1F, 0x34]
    /// T4: chip erase (nothing back).
    public static let chipErase: [UInt8] = [0x1C, 0x14]

    /// T3: write the debug configuration (nothing back).
    public static func writeConfig(_ value: UInt8) -> [UInt8] { [0x4C, 0x1D, value] }

    /// Saves A, DPS, DPH, DPL into debugger slots 0–3 and selects DPTR0 (20 bytes).
    static let xdataPrologue: [UInt8] = [
        0x40, 0x55, 0x00, 0x72, 0x56, 0xE5, 0x92, 0xBE, 0x57, 0x75, 0x92, 0x00, 0x74, 0x56, 0xE5, 0x83,
        0x76, 0x56, 0xE5, 0x82,
    ]
    /// Restores DPTR, DPS and A from the slots (10 bytes).
    static let xdataEpilogue: [UInt8] = [0xD4, 0x57, 0x90, 0xC2, 0x57, 0x75, 0x92, 0x90, 0x56, 0x74]

    /// `MOV DPTR,#address` (5 bytes).
    static func setPointer(_ address: UInt16) -> [UInt8] {
        [0xBE, 0x57, 0x90, UInt8(address >> 8), UInt8(address & 0xFF)]
    }

    /// T5 body: read `count` XDATA bytes from the current DPTR, flushing every 64th and the last.
    static func readBody(count: Int, flushEvery: Int = 64) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(6 * count)
        for item in 1...count {
            bytes += [item == count || item % flushEvery == 0 ? 0x4F : 0x4E, 0x55, 0xE0, 0x5E, 0x55, 0xA3]
        }
        return bytes
    }

    /// T5: read `count` (1…) bytes of XDATA at `address`; `count` bytes come back.
    public static func readXdata(_ address: UInt16, count: Int) -> [UInt8] {
        xdataPrologue + setPointer(address) + readBody(count: count) + xdataEpilogue
    }

    /// T6 body: write `bytes` at the current DPTR.
    static func writeBody(_ data: [UInt8]) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(10 * data.count)
        for value in data { bytes += [0x8E, 0x56, 0x74, value, 0x5E, 0x55, 0xF0, 0x5E, 0x55, 0xA3] }
        return bytes
    }

    /// T6: write `data` to XDATA at `address`; nothing comes back.
    public static func writeXdata(_ address: UInt16, _ data: [UInt8]) -> [UInt8] {
        xdataPrologue + setPointer(address) + writeBody(data) + xdataEpilogue
    }

    /// T11: BURST_WRITE of exactly 1024 bytes into DBGDATA.
    public static func burstWrite1024(_ data: [UInt8]) -> [UInt8] {
        precondition(data.count == 1024, "BURST_WRITE frames carry 1024 bytes")
        return [0xEE, 0x84, 0x00] + data
    }

    /// T10 begin (28 bytes): saves A, PSW, DPS, DPH, DPL, FMAP; selects DPTR0.
    public static let codeReadBegin: [UInt8] = [
        0x40, 0x55, 0x00, 0x72, 0x56, 0xE5, 0xD0, 0x74, 0x56, 0xE5, 0x92, 0xBE, 0x57, 0x75, 0x92, 0x00,
        0x76, 0x56, 0xE5, 0x83, 0x78, 0x56, 0xE5, 0x82, 0x7A, 0x56, 0xE5, 0x9F,
    ]
    /// T10 end (18 bytes): restores FMAP, DPTR, DPS, PSW, A.
    public static let codeReadEnd: [UInt8] = [
        0xCA, 0x57, 0x75, 0x9F, 0xD6, 0x57, 0x90, 0xC4, 0x57, 0x75, 0x92, 0xC2, 0x57, 0x75, 0xD0, 0x90,
        0x56, 0x74,
    ]

    /// T10 pointer: `MOV DPTR,#address` in its own transfer.
    public static func codePointer(_ address: UInt16) -> [UInt8] { setPointer(address) }

    /// T10 chunk: read `count` (≤ 128) bytes of CODE space from DPTR (CLR A; MOVC A,@A+DPTR; INC DPTR).
    public static func readCode(count: Int) -> [UInt8] {
        var bytes: [UInt8] = []
        bytes.reserveCapacity(9 * count)
        for item in 1...count {
            bytes += [0x5E, 0x55, 0xE4, item == count || item % 64 == 0 ? 0x4F : 0x4E, 0x55, 0x93, 0x5E, 0x55, 0xA3]
        }
        return bytes
    }

    /// T9: set FMAP with a DEBUG_INSTR (`MOV 0x9F,#bank`), avoiding the XDATA mirror (§13.6).
    public static func setFMAP(_ bank: UInt8) -> [UInt8] { [0xBE, 0x57, 0x75, SFR.fmap, bank] }

    /// The SET_CHIP_INFO text: target name and debugger ID, space padded to 48 bytes.
    public static func chipInfoText(target: String, debuggerID: UInt16) -> [UInt8] {
        var text = [UInt8](repeating: 0x20, count: 0x30)
        for (index, byte) in target.utf8.prefix(16).enumerated() { text[index] = byte }
        let id = Array(HexText.digits(debuggerID).utf8)
        let padded = [UInt8](repeating: UInt8(ascii: "0"), count: max(0, 4 - id.count)) + id
        text.replaceSubrange(0x10..<0x14, with: Array("DID:".utf8))
        text.replaceSubrange(0x15..<0x19, with: padded.suffix(4))
        return text
    }
}
