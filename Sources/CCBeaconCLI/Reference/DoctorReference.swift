import CommandLineKit

extension DoctorCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon doctor --ledger provisioning.sqlite
            ok     ccbeacon: …
            ok     data: 4 boards and the bundled templates in …
            …
            ok     debugger 1:10 (port 1-1), serial EMU001: opens; target CC2541F256 (256 KiB), IEEE address …
            ok     debugger 1:11 (port 1-2), serial EMU002: opens; target CC2541F256 (256 KiB), IEEE address …
            ok     ledger: provisioning.sqlite: a ccbeacon ledger, schema version 6, 8 stations
            …
            ```

            The burn test on a new bench:

            ```console
            $ ccbeacon doctor --burn-test --yes --report first-burn
            …
            burn test on debugger 1:10 (port 1-1): CC Debugger 0451:16A2, serial EMU001, firmware 0x5CC rev 0x44
              chip: CC2541F256 (chip ID 0x41, revision 0x13), IEEE address 00:12:4B:01:00:01, secondary address none
              proven framing: works (erased, written, every byte read back, CRC verified; 262128 bytes, … USB transfers, … s)
              packed framing: works (erased, written, every byte read back, CRC verified; 262128 bytes, … USB transfers, … s)
              the chip is left erased (checked by CRC)
              framings that work on this debugger: proven, packed (proven is the default)
            report: first-burn/ (summary.txt, summary.json, trace.pcap, descriptors.txt); attach it to a bug report
            ```
            """#,
        sections: [
            ManualSection(
                "Checks",
                #"""
                `doctor` checks what a new bench needs and prints each finding with its fix: this ccbeacon and where
                it found its boards and templates (or what to set); the udev rule — none found in `/etc`, `/run`,
                `/usr/lib` or `/lib/udev/rules.d` that names the CC Debugger (the rule to install), or one that tags
                for `uaccess` but sorts after systemd's `73-seat-late.rules` and so gives nobody access (the `mv` that
                renames it); the USB library and its version (`libusb 1.0.26`); every CC Debugger with its bus
                address, port and serial number, whether this user may open it (if not: the user, the rule, the
                reload and the replug; a debugger another program holds: close it), and the chip behind it (none:
                the wiring; debug-locked: `ccbeacon erase`; another part: boards/chips.json); and with `--ledger`,
                whether the ledger can be used (a file: a ccbeacon ledger, or none yet in a folder this user may
                write; a server: reachable, and a ccbeacon ledger or an empty database, which the first provision
                sets up). `--json` for machines. Exit 0 when nothing failed
                (warnings allowed), 1 otherwise. Tested in process (a debugger this user may not open, no target, a
                locked chip, rules too late and in place, ledgers) and through real libusb on emulated debuggers. It
                cannot yet simulate a device node another user owns: the emulator's testbed is root's (the test
                runs as root, which opens anything), so the "may not open it" case is tested with a provider that
                refuses, as libusb does with `LIBUSB_ERROR_ACCESS`. A debugger that sees no target is told to
                press its reset button first (the well-known first-contact trap), then to check the wiring; a
                debugger firmware revision no report has mentioned (seen: 0x0027, 0x0032, 0x0044) is a warning
                that names TI's SmartRF Flash Programmer to update it.
                """#),
            ManualSection(
                "The burn test",
                #"""
                After a confirmation ("Erase it? [y/N]"; `--yes` skips it, and with no terminal to ask on `--yes`
                is required), on the
                chip behind the debugger (`--device` when several are attached) it erases, writes every flash page
                but the 16 lock-bit bytes with address-dependent bytes (a write into the wrong page or bank reads
                back wrong), reads every byte back and runs the CRC verify (not on a CC2430/31, whose read-back is
                the check) — once with each USB framing, proven
                first, the second pass writing the complement so that every bit is written as 0 once — reads the
                IEEE addresses and the debugger's firmware ID and revision, and leaves the chip erased (checked by
                CRC, or by reading back on a CC2430/31). It says which framings work on this debugger: a stall or a timeout with the packed framing
                is a finding (the default works), the rest of the test then runs on a freshly opened session; a
                debugger lost or an I/O error in any pass fails the test, and a pass whose read-back differed
                leaves its framing "undecided" (a flash fault is as likely). It fails (exit 1) naming the first
                address that read back differently (tested with the emulator's `--fault corrupt=0x1234:0x01`: "the
                read-back differs at 0x1234 (wrote 0xA7, read 0xA6) with the packed framing"), or when the chip
                could not be left erased. A locked chip is erased first (its secondary address is then unknown).
                `--report DIR` writes `summary.txt`, `summary.json`, the USB trace `trace.pcap` and
                `descriptors.txt` (USB IDs, bcdDevice, strings, port, GET_STATE) into DIR — a new folder, or one an
                earlier burn test wrote (its four files, each a regular file, and what a killed report left, which
                is cleared); a folder holding anything else, a file or a link is refused before anything is
                touched (`DIR/` and `DIR/.` are DIR), and `--trace` beside `--report` is refused (the report holds
                the trace). After the confirmation the folder is held open, locked (a second burn test into it
                stops before its test begins) and checked again, so a folder swapped for a link meanwhile is never
                written through (a folder changed since its check is a failure, exit 1, before the test begins); an
                earlier report's summaries go when the test begins, so a run killed mid-test leaves only its own
                trace; the debugger is listed again through the report's trace, so its descriptor
                requests are in it. A test that cannot begin (no target) still writes its report, with the error
                (and `erased`: true in summary.json where a locked chip's erase had begun, as when the size it
                then reports contradicts `--flash-size`);
                a trace that stopped (a full disk) is said in both summaries, and when the trace took the room the
                summaries need, its last records are cut (whole) to make it, which the summary says. The lock bits are never written. On
                the device-time model the test takes about 45 s at a 1 MHz debug clock and about 5 minutes at
                150 kHz (reading 256 KiB back through debug commands dominates).
                """#),
        ])
}
