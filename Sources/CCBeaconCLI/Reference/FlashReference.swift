import CommandLineKit

extension FlashCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon flash out/Hall_A.hex
            flashed out/Hall_A.hex to the CC2541F256 on 1:10: 3 KiB written, identity bytes 0x7F02-0x7F25,0x7F28-0x7F2C read back (template 'cc2541-ibeacon'), the whole image verified (crc); the target is running
            ```

            With a USB trace to send when something goes wrong:

            ```console
            $ ccbeacon flash out/Hall_A.hex --trace flash.pcap
            flashed out/Hall_A.hex to the CC2541F256 on 1:10: 3 KiB written, …
            $ tshark -r flash.pcap -Y 'usb.transfer_type == 0x03' | head -3
            ```
            """#,
        sections: [
            ManualSection(
                "Programming and verification",
                #"""
                `flash` erases the chip (resetting into debug mode first, polling with a bounded timeout and
                checking it is unlocked afterwards), writes only the 1 KiB blocks that hold data, with the flash
                controller's abort flag checked after every block, reads the station's identity bytes back byte
                for byte, verifies the whole image (by the chip's own CRC unit by default, `--verify read` reads
                every byte back, `--verify none`), and resets the target so it runs. Either verify compares the
                whole 1 KiB blocks the image touches, as programming wrote them: a gap inside such a block must be
                0xFF (erased) on the chip. On a CC2430/31 `--verify crc` reads every byte back instead (the report
                says `read`): where in XDATA the CRC unit's DMA would find each flash bank is not in our sources.

                "Verified" means the identity bytes were read back from the chip. A CRC-16 can be fooled: four
                stuck-at-zero bits chosen well leave it unchanged. So whatever `--verify` says, `flash` and
                `provision` first read back, byte for byte, every byte the template marks as a field (payload
                block, advertiser address, interval, TX power) and the OAD header, and only then accept the rest
                by CRC. `flash` finds the fields by matching the image against the templates it knows (bundled and
                `$CCBEACON_TEMPLATES`: on an erased chip the image leaves the same flash as a template everywhere
                but in its fields, whatever its layout — HEX or `.bin`); for other images it reads back every
                beacon payload and OAD header it finds by scanning, and says so — or that it found none. A station
                runs only on its template's chip: on any other part it is refused (exit 65) before the chip is
                touched — a debug-locked one of another family too, by its target ID; a locked one of the same
                family tells its size only once erased, and the refusal then says its flash is blank.
                A debug-locked chip hides its flash size; `flash` checks the image fits a chip with
                that target ID, erases it (which clears the lock, as cc-tool does), then identifies and programs
                it. An image that fits only the larger part (say 256 KiB of data on what turns out to be a
                CC2541F128) is refused after that erase: the size is not known before it, and a locked chip's
                firmware is lost to any flashing anyway. Given --flash-size, a locked chip is taken at that
                size: an image too large for it is refused before the erase. A failure once the erase has begun says that the flash
                may be erased or partly written; a lock that does not take says that the image was written; a reset
                to run that fails at the end says the image is written and verified (or not verified, with
                `--verify none`), and locked if so, and that a power cycle starts it (exit 1 all three). `info` still reports a locked chip as locked.
                An image with data in the last flash page (lock bits, secondary address) is refused unless
                `--allow-last-page`; `--mac XX:…` writes a secondary address (6 bytes on a CC2540/41, 8 on a CC2530/31/33 and on a
                CC2430/31, where it is the last 8 bytes of flash; the CC2543/44/45 and CC251x/111x have no IEEE
                address and no place for one), `--preserve-mac`
                keeps the chip's own, `--lock-debug` locks the debug interface at the end and reads the lock back after a reset (a chip
                whose lock does not take: exit 1, never "locked"). With `--allow-last-page`, an address given replaces one the
                image holds, as `--preserve-mac` keeps the chip's (none, where it has none) — the summary then says
                which of the image's bytes the address took the place of, which the verification does not cover —, `--lock-debug` keeps the image's page write-protect bits, and an image whose own
                lock bits clear DBGLOCK locks the chip as `--lock-debug` does: read back, and said. A failure
                once lock bits that lock the chip may be written (the image's own or `--lock-debug`'s, from
                the start of the last block's write, or the lock byte of a CC2430/31, CC251x or CC111x; verification
                failing, say) says that the chip may be debug-locked from its next reset; `flash` and
                `erase` unlock it with their chip erase. `info` prints the chip
                ID, revision, flash and RAM size, lock state and both IEEE addresses; `read` dumps the flash (all
                banks, or `--range`) to HEX or `.bin`; `erase` clears the chip and its lock bits.
                The CC2510/11, CC1110/11 and CC2430/31 report no flash size: `info`, `read` and `flash` take it as
                `--flash-size 8|16|32` (`32|64|128` on the CC2430/31; KiB, from the part's marking); without it
                `info` says so and `read`
                and `flash` refuse (exit 1) before touching the chip; a size the family does not come in, or
                one that disagrees with a chip that reports its own, is a usage error (exit 64). Their
                `--lock-debug` writes the lock byte at information-page byte 1 with only its debug bit
                cleared (byte 1, as cc-tool and the Glasgow project write it; TI's data sheet says byte 0),
                and a chip erase clears it.
                """#),
            ManualSection(
                "USB framing",
                #"""
                By default `flash` and `provision` send only what real debuggers are known to
                take: each 1 KiB BURST_WRITE is the one frame of its bulk OUT,
                as cc-tool and every other known client send it; other frames share transfers. `--usb-framing
                packed` puts the frames around the burst into the same transfer (start the previous block's
                write, arm the burst channel, burst, read FCTL): about 40 % fewer transfers, but no known client
                sends a frame after a burst's data, so it is **unconfirmed on hardware** — use it once a burst
                test on your debugger says it works. The emulator models both firmwares (`cc-debugger-emulator
                --bursts-alone`: a transfer with anything besides a burst stalls), and the tests run both framings
                against both: proven works on either, packed fails on the strict one with "the debugger stalled the
                transfer", never with a wrong image.
                """#),
            ManualSection(
                "USB trace",
                #"""
                `--trace FILE` on `devices`, `info`, `erase`, `flash`, `read`, `provision` and
                `doctor` writes every transfer with the debuggers — each control and bulk transfer's submission
                (setup, data sent) and completion (status, data received), with the wall-clock time — as a pcap
                file in Linux's usbmon format (link type 220, LINKTYPE_USB_LINUX_MMAPPED), which Wireshark and
                Debian's `tshark` open and dissect (`tshark -r FILE -Y 'usb.transfer_type == 0x03'` lists the bulk
                transfers). It is what to send when a debugger misbehaves. Records are written as they happen, one
                whole record per write, so a run that is killed leaves a trace up to that moment. FILE's name ends
                in `.pcap` (so it is never a ledger, its `-wal` journal or a lock, whoever opens those), and it is
                a name where nothing is yet, an empty file, or a trace an earlier ccbeacon run wrote (marked in the
                pcap header, so a capture you made with tcpdump or Wireshark is never replaced); anything else — a
                list, a link, a pipe or device (looked at without being opened), a file that is also another
                argument of the same command (`read -o d.pcap --trace d.pcap`, `./d.pcap` or a hard link alike)
                or where its output goes, a trace another run is writing (it is locked while open) — is refused
                before any debugger is touched (a folder that does not exist too: exit 64). An earlier
                trace is checked, locked and emptied through one descriptor, and emptied only when the first
                record comes; a new file is made only then, and only if nothing has appeared under its name
                meanwhile (another run's trace, a file someone made: left alone, the run goes on without a trace
                and says so). A command that fails before reaching a debugger leaves everything as it was;
                one that reached it replaces an earlier trace with its own. A trace that cannot be written (a
                full disk, `ulimit -f`) ends on the last whole record, is said in a warning and changes nothing
                else. The string descriptors ccbeacon reads while listing debuggers and the
                SET_CONFIGURATION it sends on opening are in it too.
                """#),
            ManualSection(
                "Transfers",
                #"""
                Compared with the reference client (cc-tool), programming plus CRC verification takes about 4.5 USB
                transfers per KiB instead of 15 (proven framing: per 1 KiB block an OUT that starts the previous
                block's flash write and arms the DMA, the 1 KiB burst alone, an OUT that reads the flash status and
                its IN; a 4 KiB CRC DMA per round trip), about 2.5 with `--usb-framing packed`. See benchmarks/README.md in the source. **This path is tested against an emulated CC Debugger
                and every chip of boards/chips.json (see docs/testing.md in the source; the README's "Chips" says which),
                not yet against hardware: see "First hardware" in the README.**
                """#),
        ])
}
