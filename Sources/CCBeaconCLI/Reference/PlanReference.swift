import CommandLineKit

extension PlanCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            The second floor's places become stations of major 2, each with the next free minor; the
            list carries the places' columns to batch, provision, the ledger and its export:

            ```console
            $ ccbeacon plan places.csv --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 2 -o floor2.csv
            wrote floor2.csv: 3 stations, UUID 7634A485-1732-4B7D-AB44-D505D8A24C60 major 2, minors 1…3
            ```

            The same site with the battery each station will need, at the interval batch will burn:

            ```console
            $ ccbeacon plan places.csv --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 2 -o floor2.csv --battery cr2450 --board hm10 --interval 500
            wrote floor2.csv: 3 stations, UUID 7634A485-1732-4B7D-AB44-D505D8A24C60 major 2, minors 1…3
            battery: about 302 days on CR2450, average 67.3 µA (an event every 505.0 ms at 0 dBm; a model, never measured on a board)
            ```
            """#,
        sections: [
            ManualSection(
                "Planning a site",
                #"""
                iOS monitors at most 20 beacon regions per app, so a site is planned as few UUIDs, a major per
                site or floor, and a minor per place: `plan` gives the minors. The places file is CSV with a
                `name` column; `note`, `power` and `address` are taken as a station list takes them, and any
                other column (floor, room, x, y, notes) is kept as each station's attribute, in the file's
                order. A column one letter away from a station list's (`mjor`, `powr`) is taken for a typo and
                refused; `uuid`, `major` and `minor` columns are refused (the plan gives them). An attribute
                that begins as a spreadsheet formula does (`=`, `+`, `-`, `@`) must be a number (`-12.5`).

                Minors run from `--first-minor` (1) and skip every minor that a station of `--ledger` (every
                registered station, burned or not) or of the `--list` files holds under the same UUID and
                major. A place whose name is already such a station keeps its minor: plan a site again after
                adding a place, and only the new place gets a new minor. A place named like a station of
                another UUID or major is refused (rename it, or plan it there). Every problem is reported with
                file, line and column, and nothing is written while any remains — a site with more places than
                minors left included (exit 65). Stations of `--list` and `--ledger` that disagree with each
                other — one identity under two names, or one name with two identities — are refused, naming
                both sources (exit 65). The list is written whole or not at all (`-o`, never over an input). A
                station list already at `-o` is replaced only by the same list (the same plan run again; exit 1
                otherwise): to plan over one and keep its identities, give it as `--list` and write another
                file.
                """#)
        ])
}
