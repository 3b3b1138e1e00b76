import CommandLineKit

extension CalibrateCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon calibrate --rssi hall-a-1m.csv
            measured power -60 dBm from 24 samples of hall-a-1m.csv (the lowest and highest 2 left out; 20 averaged, -62…-58 dBm, mean -60.00)
            $ ccbeacon calibrate --from bench.btsnoop --address C7:D5:60:AD:5D:5A
            $ ccbeacon calibrate --rssi hall-a-1m.csv --station "Hall A" --list stations.csv --write
            measured power -60 dBm from 24 samples of hall-a-1m.csv (…)
            recorded: stations.csv:3: 'Hall A', power -59 → -60 dBm
            $ ccbeacon calibrate --from bench.btsnoop --station "Hall A" --ledger provisioning.sqlite --write
            ```
            """#,
        sections: [
            ManualSection(
                "Samples",
                #"""
                Take at least 20 RSSI samples 1 m from the station (fewer are refused, with how many more): the
                lowest and highest tenth are dropped (reflections, someone walking by), the rest averaged and
                rounded to the nearest dBm (a mean of −60.5 gives −61). Samples come from `--rssi FILE` — one
                value per line, or a CSV whose header has an `rssi` column, as phone apps export; whole dBm,
                −127…20, a bad value named with its line and column — or from a btsnoop capture (`--from FILE`,
                as `btmon -w` or Android's HCI snoop log write it, HCI UART or monitor datalink, legacy and
                extended advertising reports) filtered to one advertiser: `--address`, or `--station NAME` whose
                address is looked up in a batch record (`--stations`), a ledger (`--ledger`: the address it was
                burned with) or a list's `address` column (`--list`), and then only its reports that carry its
                iBeacon (UUID, major and minor; another device at those six address bytes, or other data, is not the
                station). Reports without an RSSI (127) are left out.
                One bound holds for every source: a sample outside −127…20 dBm (what an HCI receiver reports) is
                refused — a capture's report of +100 or −128 dBm as much as a file's — and nothing is calibrated.
                A result more than 25 dB from what the station predicts is refused too, unless `--force`: the
                station's registered power (the batch record's, the ledger's or the list's — its board's figure at
                its TX power, or the list's own value), or −59 dBm (a beacon 1 m away at 0 dBm) when no station is
                looked up — samples of another station, a phone on the antenna or the wrong distance, caught
                before they are written. A capture that heard the station through several controllers (the monitor datalink records each)
                is refused: one receiver's samples only; one that ends inside its last record (copied or stopped while it
                was written) gives the samples of the records before it, with a warning (see `ccbeacon scan`). `--json` for machines (`station`, `measuredPower`,
                `samples`, `used`, `min`, `max`, `mean` as a number, `written`).
                """#),
            ManualSection(
                "Writing the value",
                #"""
                `--write` records the value for `--station NAME`:
                - in a CSV station list (`--list FILE`): the station's `power` cell is replaced and **every other
                  byte of the file stays as it was** (line ends, quotes, a byte-order mark, the other cells); a
                  list without a `power` column gets one at the end of each row, empty for the other stations (an
                  empty power keeps their board figure). A row without its trailing cells (spreadsheets drop empty
                  ones) is read as `batch` and `provision` read it — the missing cells are empty — and gets them
                  written out up to its power cell. The new list is read back before it is written and must
                  be the old one with that one power changed; it is written atomically (temporary file, `fsync`,
                  rename), through a symbolic link to the file it leads to, with the file's owner, group, permission
                  bits and extended attributes (POSIX ACLs among them) kept, and nothing added (a folder's default
                  ACL does not reach a list that had none) — root calibrating a user's list leaves it the user's. The new list is written and synced beside the old one before the ledger records
                  anything, so whatever keeps it from its place is found while nothing is recorded: refused, with
                  the list untouched and nothing recorded anywhere, are a list this user may not write, another
                  user's list (unless root: the new file would be yours), a read-only one (no write bit at all), an
                  immutable or append-only one or folder (`chattr`), one in a folder that may not be written, one
                  with several names (hard links: replacing one name would part it from the others), an attribute
                  that cannot be copied, and a JSON list (set its `power` by hand). Two runs calibrating stations
                  of one list take turns: each holds the list's lock (`flock` on its folder) from before it reads
                  the list until its rename, so the second edits what the first wrote ("waiting for another
                  ccbeacon that is rewriting LIST"); a list another program changed between its reading and the
                  rename is left as it is. A power the list already has is not written again.
                  A temporary file a killed run left beside the list is removed. `batch` then burns the value (`powerSource` `list`).
                - in a ledger (`--ledger FILE`, which must exist): a calibration row (time, power, samples given
                  and averaged, where they came from) in one transaction, and the value becomes the station's
                  power from then on. The database refuses a calibration of an unknown station, a power outside
                  −128…127 and fewer than 20 samples; `ledger check` checks the table too. A list without a power
                  of its own then registers as it is (the calibrated value stands); a list that gives another power
                  is refused with both values named. `provision --reprovision` burns a station whose calibration
                  differs from the power its chip carries again, on that chip (see provision).

                With both, the ledger is written first; if the list then cannot be written, the message says
                the ledger has the calibration and the list was left as it was.
                """#),
        ])
}
