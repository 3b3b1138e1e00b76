import CommandLineKit

extension InfoCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon info
            debugger 1:10: CC Debugger
            target: CC2541F256 (chip ID 0x41, revision 0x13)
            flash: 256 KiB, RAM: 8 KiB, debug lock: off
            primary IEEE address: 00:12:4B:00:25:41
            secondary address: none (erased)
            ```

            With --json, the same as one object: sizes in bytes, null where there is none. The
            addresses are null when erased or absent, and when they could not be read (both, on a
            debug-locked chip). Where the chip has a place for an address that was not read,
            primaryAddressDoubt or secondaryAddressDoubt says why: the chip is debug-locked, or its
            flash size was not given or is none the data knows; a secondary address is also doubted
            when its last page holds data beside it. Each is null otherwise.

            ```console
            $ ccbeacon info --json
            {
              "device": "1:10",
              "chip": "CC2541F256",
              "chipId": 65,
              "revision": 19,
              "flashSize": 262144,
              "flashSizeCode": 4,
              "flashSizeReported": true,
              "ramSize": 8192,
              "locked": false,
              "primaryAddress": "00:12:4B:00:25:41",
              "primaryAddressDoubt": null,
              "secondaryAddress": null,
              "secondaryAddressDoubt": null
            }
            ```
            """#)
}
