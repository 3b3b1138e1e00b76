import CommandLineKit

extension EncodeCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon encode --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --power -51
            02 01 06 1A FF 4C 00 02 15 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD
            ```

            The 30 bytes are the Flags AD `02 01 06` and the Apple manufacturer AD (`1A FF 4C 00 02 15`, UUID
            in string order, major and minor big-endian, power as a signed byte). `--flags 0x04` selects TI's
            SimpleBLEBroadcaster flags, `--flags none` leaves the Flags AD out. `--format c` prints a C array
            for firmware source, `--format json` a machine-readable object. Other beacon types:

            ```console
            $ ccbeacon encode --type altbeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --power -51
            02 01 06 1B FF 18 01 BE AC 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD 00
            $ ccbeacon encode --type eddystone-uid --namespace 7634A485D505D8A24C60 --instance 000000010002 --power -10
            02 01 06 03 03 AA FE 17 16 AA FE 00 F6 76 34 A4 85 D5 05 D8 A2 4C 60 00 00 00 01 00 02 00 00
            $ ccbeacon encode --type eddystone-url --url https://ti.com --power 0
            02 01 06 03 03 AA FE 09 16 AA FE 10 00 03 74 69 07
            ```

            For Eddystone, `--power` is the calibrated TX power at 0 m (−100…20 dBm, default −18 = −59 + 41).
            `eddystone-uid` also accepts `--uuid/--major/--minor`: namespace = the UUID's first 4 and last 6
            bytes, instance = `00 00` + major + minor (our convention, not a standard). URLs are compressed
            with the scheme and expansion codes; one that does not fit in 17 bytes is refused with its size.

            `--format air --address XX:XX:XX:XX:XX:XX` prints what goes on air: the BLE link-layer
            ADV_NONCONN_IND PDU with that random static advertiser address (first byte C0…FF; header `0x42`),
            its CRC-24 (polynomial 0x00065B, preset 0x555555) and the PDU + CRC whitened (PN7, seeded with the
            channel index) for channels 37, 38 and 39 — or only `--channel N`'s. Bytes are in air order, each
            sent least significant bit first; the values are checked against the known answers of
            the stack-free BLE notes the firmware was built from (§4.4):

            ```console
            $ ccbeacon encode --uuid E2C56DB5-DFFB-48D2-B060-D0F5A71096E0 --major 1 --minor 2 --format air --address C0:FF:EE:12:34:56 --channel 37
            CF F6 01 95 2F 49 99 70 77 30 17 52 69 3B F8 E1 53 0B 6E BD 2B 8C C8 90 68 28 68 F4 3E 9C EC E7 43 F4 54 68 CD 6C 2B 63 78
            ```

            This is the reference model for the coming stack-free firmware (issue 7); nothing has been received
            on air with it yet.
            """#)
}
