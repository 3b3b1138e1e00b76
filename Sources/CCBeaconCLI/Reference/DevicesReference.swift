import CommandLineKit

extension DevicesCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon devices
            DEVICE  PORT  USB        PRODUCT      SERIAL  FIRMWARE        TARGET
            1:10    1-1   0451:16A2  CC Debugger  EMU001  0x5CC rev 0x44  CC2541
            ```
            """#,
        sections: [
            ManualSection(
                "Choosing a debugger",
                #"""
                With several debuggers attached, commands need `--device BUS:ADDRESS`, `--device port:BUS-PORT`
                or `--device SERIAL` (`provision`: `--devices all` or `--devices SEL,SEL`, e.g. `--devices
                port:1-2.3,port:1-2.4`, and its message names that option); they never pick one themselves. The
                port path (`devices` lists it: `1-2.3` is port 3 of the hub on port 2 of bus 1, as Linux names it)
                names the socket, so it stays when a debugger is replugged there, while the address changes; CC
                Debuggers often share one serial number or have none, and a serial two attached debuggers share
                names neither (the message lists their ports). In `provision`'s log, events and ledger a debugger
                is named by its serial number when that is plain (nothing hidden in it), reads like no selector
                and is unique among the chosen ones as shown, else by its port. A serial selects as the device
                gives it (`devices --json`), else as `devices` shows it. Every failure says what to do: no
                debugger (is it plugged in, the udev
                rule), no target (wiring and power, the debugger's reset button), a locked chip (`erase`), a
                timeout or an unplugged cable in the middle of a write (the chip is left partly written: run
                `flash` again, which starts with an erase) or of an erase (partly erased: run `erase` again), a
                failed verification.
                """#)
        ])
}
