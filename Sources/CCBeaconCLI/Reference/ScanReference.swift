import CommandLineKit

extension ScanCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ sudo btmon -w scan.btsnoop          # while 'bluetoothctl scan on' runs in another terminal; Ctrl-C
            $ ccbeacon scan --from scan.btsnoop --stations out/stations.json
            scan.btsnoop: 412 advertising report(s)
            heard      Entrance (7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 1 power -67 dBm) from D9:BF:BA:80:9E:AC: ok; RSSI 137× -71/-64/-58 dBm (min/median/max)
            NOT HEARD  Hall A (7634A485-1732-4B7D-AB44-D505D8A24C60 major 1 minor 2 power -59 dBm)
            …
            ccbeacon scan: error: 7 of 8 station(s) not heard exactly as burned
            ```

            ```console
            $ sudo ccbeacon scan --hci hci0 --seconds 10 --ledger provisioning.sqlite
            hci0, 10 s: 800 advertising report(s)
            heard      Entrance (…) from D9:BF:BA:80:9E:AC: ok; RSSI 100× -66/-63/-60 dBm (min/median/max)
            …
            ```
            """#,
        sections: [
            ManualSection(
                "Matching",
                #"""
                Reads the LE advertising reports (legacy and extended) of a btsnoop capture — `btmon -w`, or
                Android's "Bluetooth HCI snoop log"; HCI UART and monitor datalinks — or hears them itself through
                a controller (`--hci hci0`, see LIVE SCAN), and matches them against what should be on air: the stations
                of a batch record (`--stations out/stations.json`), the stations a provisioning ledger records as
                verified, each with the address it was burned with (`--ledger provisioning.sqlite`; opened
                read-only, never created), or every iBeacon of one UUID (`--uuid U [--major M] [--minor N]`). For
                each station: heard or not, from which address, whether the advertising data is exactly what
                ccbeacon burned, and the RSSI (count, min, median, max). Flagged: a station heard from two addresses or from another
                address than the one the record says it was burned with (a clone, another board; addresses are
                compared by their six bytes, whatever kind the report gives: a station burned with
                --address-mode secondary goes on air under TI's stack with them as its public address), a station heard
                with other bytes (another power, say), one heard only in part (an extended report whose Data Status
                says more data follows, or that the rest was cut off: its bytes not confirmed, `partialReports`), and
                an iBeacon of the same UUID that is no expected station
                (`STRANGER`). Each station's PDU types are reported (`ADV_NONCONN_IND` for the bundled firmware;
                another type is shown, not failed). Other beacons heard — an iBeacon of another UUID, AltBeacon,
                Eddystone-UID and -URL, decoded by the same decoders as `encode` and `inspect` — are counted in
                the text and listed by `--json`. A record that lists no station, or a ledger with no verified
                station, checks nothing and is refused. `--json` for machines (`capture` and `cutShort`, or `controller`
                and `seconds`, then `reports`, `allGood`, `stations` with `eventTypes`, `strangers`, `others`). The
                bytes expected of each station are the ones its batch record says it was burned with
                (`advertisingData`); for a record from before records kept them, the iBeacon data with flags `02 01
                06`. Exit status 0 only when every expected station was heard with
                exactly its bytes from one address. A damaged capture is refused at the byte where it goes wrong
                (exit 65). A capture that ends inside its last record — copied or stopped while it was written:
                an Android snoop log pulled with Bluetooth on, a killed `btmon -w` — is read up to that record,
                as Wireshark reads it, with a warning that names the record and its byte (`cutShort`, else null);
                a record that runs past the end and claims more bytes than its packet had, or any record that claims
                more than an HCI packet holds (65,540 bytes), is damage.
                """#),
            ManualSection(
                "Live scan",
                #"""
                `--hci NAME` scans with a controller for `--seconds` (default 10, 0.1…3600): BlueZ's raw HCI
                socket, a passive LE scan (10 ms interval and window, duplicates not filtered so every
                advertisement is an RSSI sample), LE Set Scan Parameters and Enable — or, on a controller the
                kernel already drives with the extended commands (it refuses the legacy ones with "Command
                Disallowed"), their extended twins — and scanning switched off again afterwards, also after an
                error. Sending HCI commands needs **CAP_NET_RAW**: run it as root, or give the binary the
                capability once (`sudo setcap cap_net_raw+ep "$(command -v ccbeacon)"`); without it the error says
                so. No Bluetooth in the kernel (a container), no such controller, a powered-down controller and a
                controller another program is scanning with (`bluetoothctl scan off`) each get their own message.
                **The live scan has never run on a real controller**: it is tested with a scripted controller, in
                process and through a socket pair that carries the HCI packets the way the raw socket does. The
                capture reader is checked against Debian's `btmon -r` in the tests; neither it nor `calibrate
                --from` has read a capture from a real controller yet.
                """#),
        ])
}
