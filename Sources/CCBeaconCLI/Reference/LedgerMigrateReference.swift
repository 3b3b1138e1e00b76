import CommandLineKit

extension LedgerMigrateCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon ledger migrate --from provisioning.sqlite --to postgresql://bench@db.example/beacons
            ```
            """#,
        sections: [
            ManualSection(
                "The copy",
                #"""
                **`ledger migrate --from FILE|URL --to FILE|URL`** copies a ledger with its whole history (stations
                in list order, every attempt with its id, bench, outcome, read-back and on-air check, every
                calibration), either way. The source is checked first and only read (a file under the lock
                `provision` takes; a server in one snapshot), and copied only with every burn settled: an attempt
                in progress or interrupted (a held station) is refused, named, and nothing copied (exit 1) — its
                outcome may be in a bench's journal, which is recorded only onto the ledger it was written for,
                and a file copy would release it at once; let benches finish, run the bench that held it again,
                attach its chip or release it first. A pool is copied only once none of its runs may still burn
                into it (ended, or two minutes past its lease): a bench between two chips has nothing open, but
                what it burned after the copy would be burned again from the copy (exit 1, the runs named). The
                target must be empty — a path where no file is
                (built under a temporary name and linked into place once checked) or a database without a
                schema `ccbeacon` or with an empty ccbeacon ledger in it (one transaction; the ledger lives in
                that schema, and other schemas and their tables are left alone) — and its own rules check every
                row on the way in; the copy is then checked and
                read back, and must equal the source. File attempts without a bench get `unrecorded` on a server.
                A file ledger may hold several lists; on a server they become one pool, so every bench of it must
                then start with all of its stations as one list.
                """#)
        ])
}
