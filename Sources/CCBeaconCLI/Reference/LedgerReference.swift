import CommandLineKit

extension LedgerCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let showManual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon ledger show --ledger provisioning.sqlite
            STATION    MAJOR/MINOR  ATTEMPTS  BENCH  STATE
            Entrance   1/1          1         …  done      00:12:4B:…
            Hall A     1/2          1         …  done      00:12:4B:…
            …
            8 of 8 done
            bench …: 8 done, 0 held, 0 burning, 0 failed attempt(s)
            ```

            On a shared ledger:

            ```console
            $ ccbeacon ledger show --ledger postgresql://bench@db.example/beacons
            ```
            """#,
        sections: [
            ManualSection(
                "What it shows",
                #"""
                `ledger show` lists every station as done (chip, time; and "calibrated since: burn again" when a
                calibration changed its power after the burn), held or pending (with its last failure), and the hook runs still pending per bench.
                """#)
        ])

    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let exportManual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon ledger export --ledger provisioning.sqlite --format csv > registry.csv
            ```
            """#,
        sections: [
            ManualSection(
                "The registry",
                #"""
                `ledger export --format csv|json [-o FILE]` (to a file: whole and durable, never over the ledger) is the registry a backend needs: station, UUID, major, minor,
                the measured power burned into the chip (a calibration recorded since changes the station, not the
                chip, until it is burned again), chip, debugger, time, the advertiser address the chip sends with
                (for templates that have one; empty for attempts recorded before ledgers kept it), `readBack`:
                which flash bytes were read back and compared byte for byte when the attempt was verified, as
                inclusive address ranges (`0x7F00-0x7F2F,0x7F30-0x7F3F`; empty when nothing was read back), and
                what a scan after the burn heard (`heard` yes/no, `rssiCount`, `rssiMedian`; empty when nobody
                listened — see `--scan-verify`), `powerSource` (`calibration` or `registered`, see MEASURED POWER in
                ccbeacon(1)), `debugLocked`, and the `bench` and `run` that burned it (on a shared pool: which line made
                the station; columns appended last, so readers of the earlier columns are unchanged).
                """#)
        ])

    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let checkManual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon ledger check --ledger provisioning.sqlite
            provisioning.sqlite: ok (integrity, schema and every invariant checked)
            ```

            On a shared ledger:

            ```console
            $ ccbeacon ledger check --ledger postgresql://bench@db.example/beacons
            ```
            """#,
        sections: [
            ManualSection(
                "What it checks",
                #"""
                `ledger check` runs SQLite's
                full integrity check and the ledger's own invariants with queries that scan the tables instead of
                trusting the indexes that enforce them (at most one verified attempt per station and per chip, at
                most one attempt in progress or interrupted per station, and none of those beside a verified one,
                no attempt that ended without the time it ended, every station's `taken` state what its attempts
                say, no verified attempt without a verification method, no
                invalid chip id, no attempt for an unknown station, no two stations with one name or identity,
                every station's values possible: a UUID, major and minor 0…65535, power −128…127; every
                calibration of a station in the ledger, power −128…127, from at least 20 samples), and checks
                that those indexes and triggers are there with the very statements ccbeacon made them with; it lists every problem and exits 0 when the
                ledger is sound, 65 when not (`--json` for machines). A file SQLite cannot read as a ledger at all
                (its schema damaged, a table or column gone) is one problem of the check `readable`, with what
                SQLite said (`readable: database disk image is malformed`), and `schemaVersion` null: nothing
                more can be checked, and the ledger is to be restored from a backup.
                """#),
            ManualSection(
                "On a server",
                #"""
                **`ledger check`** on a server compares its tables, columns, indexes and constraints — and
                triggers (a foreign key's disabled ones too), rules, policies, row security, persistence
                (`UNLOGGED`: a crash would empty the table), defaults and inheriting tables — with the schema this
                ccbeacon makes (built in a temporary schema and rolled back), and runs every invariant with index
                scans switched off, so the tables answer, not the indexes that could be missing; it also reports
                objects in the schema that are not ccbeacon's (functions, operators, types, relations), tables not
                owned by the schema's owner and roles that may create there. `provision` refuses to write to a
                ledger whose schema is not ccbeacon's (exit 65). On a read-only server (a standby) the schema
                cannot be compared — that needs a temporary copy — and the check says so and checks every
                invariant; `ledger migrate --from` a standby works.
                """#),
        ])
}
