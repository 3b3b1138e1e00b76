import CommandLineKit

extension BatchCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon batch stations.csv --board hm10 -o out/ --jobs 4 --interval 1000 --tx-power -8
            8 stations from template 'cc2541-ibeacon' in out/: 8 written, 0 replaced, 0 unchanged; record in out/stations.json
            ```
            """#,
        sections: [
            ManualSection(
                "Station lists and output",
                #"""
                A station list is a CSV with a header row `name,uuid,major,minor[,power][,address][,note]`
                (columns in any order; an empty power means the board's measured power at the TX power — see
                MEASURED POWER in ccbeacon(1) —; an empty address means one derived from the
                identity; spreadsheet byte-order marks are fine) or a JSON array of objects with those keys:

                ```csv
                name,uuid,major,minor,power,address,note
                Entrance,7634A485-1732-4B7D-AB44-D505D8A24C60,1,1,-59,C0:FF:EE:00:00:01,main door
                Cafeteria,7634A485-1732-4B7D-AB44-D505D8A24C60,1,4,0xC5,,"near the till, 2 m up"
                ```

                The whole list is checked before anything is written, and every problem is reported at once with
                line and column (or JSON key path): bad UUIDs, numbers out of range, duplicate names, duplicate
                (UUID, major, minor), names that would give the same file name (a station's files are named after
                it with ASCII letters, digits, `.`, `-` and `_` kept and every other character written `_`, so a
                name needs at least one ASCII letter or digit: `東京 1` and `大阪 1` would share `___1`), invalid UTF-8 (at its first bad
                byte, never replaced by U+FFFD), and hidden characters in names and notes (a NUL, a line break,
                any C0 or C1 control, U+2028/U+2029, bidirectional controls, joiners, variation selectors and other invisible characters; a note
                may hold tabs), which would cut, break or disguise the name in the ledger, the record and the
                tables, and names or notes too long (see docs/untrusted-input.md in the source). In a JSON list, `name`, `uuid`,
                `address` and `note` must be strings and `major`, `minor` and `power` numbers or strings; a required
                key that is `null` or of another type is an error at its key path (`[1].uuid: expected a string,
                found null`), never a station silently left out; `null` for an optional key means it is not given.
                A list whose top level is an object gets a JSON error, not a CSV one. Any other column or key
                (floor, room, x, y, notes — what `ccbeacon plan` carries from a places file) is kept as each
                station's attribute: in the record, in the ledger and in `ledger export`. Column names and JSON
                keys are read without case (`UUID` is the UUID; `floor` and `Floor` together are refused). A
                column a letter short or long of a known one, or with two letters swapped (`mjor`, `powwer`,
                `nmae`), is refused as the typo it is, as is a plural of an identity column (`minors`); a
                changed letter is a word of its own (`tower`, `node`). The registry's own field names (`chip`,
                `at`, `run`, `bench`, …) are refused as attributes. An attribute's value follows a note's
                rules, and one that begins as a spreadsheet formula does (`=`, `+`, `-`, `@`, a tab) must be a
                plain number (`-12.5`, `1e3`; not `-inf` or hex). Output: `DIR/<name>.hex` per
                station (name made file-safe), `DIR/<name>.bin` with `--bin`, and `DIR/stations.json` with every
                station's identity, file and sha256, and the template's name, sha256 and payload address. Running
                it again over the same folder is safe: identical files are left alone, changed ones replaced
                atomically and durably, other files never touched (and listed). Only a file a batch recorded
                is replaced: a station's file of other content that no batch wrote, or a `stations.json` that
                is no batch's record (one is `format` 1 with a `template` and, for every station, a `file` and
                its `sha256`), is the user's, and the run is refused with their names (exit 1) before anything
                changes; move them away or choose another folder. Files earlier batches wrote that no station
                of the list has (a list made shorter, a run without `--bin`) are left alone and stay recorded,
                as `otherFiles` with their sha256: a later run may write them again while they hold just
                what was written. (A folder last written by ccbeacon before `otherFiles` existed, or files
                a killed run wrote for stations the next list dropped, are not vouched for: move them
                away once.) Every output path is checked
                before anything changes: a folder, FIFO or anything else but a regular file where a station's
                `.hex` or `.bin` or `stations.json` goes is a usage error (exit 64), with no file written and the
                record left as it was. The folder never holds a
                `stations.json` that disagrees with its files: while files change, the old record gives way to
                `.stations.json.incomplete`, which claims the old record's files and the run's (so the files a
                killed run wrote stay the batch's to replace), and the new record is written only after every
                file is durably in place.
                A batch killed part-way (even by `kill -9`) is reported by the next one ("the last batch into out/
                was interrupted before it wrote its record"), which also removes the temporary files the killed run
                left and lists them (those of a writer still running are left alone). One batch at a time per
                folder: a second batch into the same folder waits for the first (and says so), or with
                `--no-wait` fails at once (exit 1); the lock (`flock` on `DIR/.ccbeacon.lock`) dies with its
                process, so a crash never leaves a folder locked; a batch refused whole (the folder holds files of
                yours) removes the lock file it made, leaving the folder as it found it. A progress bar redraws on a terminal; piped, it prints a line each
                time another tenth is done, with the true whole percentage (`3/7 (42%)`). `--interval` and `--tx-power` apply to every station. Each station gets its own advertiser address
                — the list's `address` (a random static address), or one derived from its identity — and
                `stations.json` records each station's address, interval ticks, TX power, measured power and
                where that came from (`powerSource`), and the iBeacon bytes the image sends (`advertisingData`,
                hex: flags and manufacturer data as burned; `manufacturerData` for a template that holds only
                that), which `scan --stations` expects on air. Two stations that
                would advertise with one address (given or derived) are refused with both lines named, an
                `address` column with a template that has no address field too, and `--address` (one address for
                a whole batch) is refused with a pointer to the column.
                """#)
        ])
}
