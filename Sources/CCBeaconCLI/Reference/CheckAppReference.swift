import CommandLineKit

extension CheckAppCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            An app that monitors Estimote's default UUID never wakes for stations burned with another
            (regions.json also holds the stations' UUID with major 1, which covers them all):

            ```console
            $ ccbeacon check-app regions.json --ledger provisioning.sqlite
            3 regions in regions.json, 8 stations in provisioning.sqlite
            unmatched: region [0] 'store' (line 2), B9407F30-F5F8-466E-AFF9-25556B57FE6D: its UUID is Estimote's factory default, which no station uses; the stations use 7634A485-1732-4B7D-AB44-D505D8A24C60
            unmatched: region [2] 'hall' (line 4), 7634A485-1732-4B7D-AB44-D505D8A24C60 major 2: no station under its UUID has major 2 (the stations' majors: 1)
            ```
            """#,
        sections: [
            ManualSection(
                "Regions file",
                #"""
                A JSON array, one object per region the app registers: `identifier` (the name it registers
                the region under), `uuid`, and optionally `major`, and `minor` beside a major — what
                `CLBeaconIdentityConstraint` takes. Unknown keys, a minor without a major, values out of
                range and hidden characters in an identifier are errors with line and column, and nothing
                is checked. `ccbeacon ledger export --format ios-regions` writes this format: the fewest
                regions that cover a ledger (one per UUID; with the major when all its stations share one), each
                named `ccbeacon-` and its UUID (and `-` and its major). Regions are named in messages by their
                place in the array (`region [0]`) and their line.
                """#),
            ManualSection(
                "What is reported",
                #"""
                A station no region the app ends up monitoring covers (`uncovered`): the app is never woken
                for it — a region a later one of its identifier replaces covers nothing. A region no station
                matches (`unmatched`), with why: its UUID is a vendor's factory default or Apple's sample
                code's (Estimote B9407F30-…, Kontakt.io F7826DA6-…, AirLocate E2C56DB5-…); it differs from a
                UUID the stations use in a few hex digits (a typo); no station uses it at all (the closest,
                and how many of 32 digits differ); or the stations under its UUID have other majors or minors
                (those in use are listed). Two regions under one identifier (`shared identifier`): Core
                Location keeps only the one registered last; identifiers are compared as written, character
                code by character code (a precomposed é and e with a combining accent are two identifiers). More than 20 regions monitored, one per identifier
                (`too many`, `monitoredCount`): iOS monitors at most 20 per app, beacon and geographic regions together — plan few UUIDs, a major per site
                or floor, minors per place; the regions are taken as registered in the file's order, so a region
                under a 21st identifier is not monitored and covers nothing (a station only it covers is
                uncovered, and said so). `--json` gives the same for CI (`passed`, `uncovered` — each with the
                `replacedRegion` that would cover it and the region monitored instead, or null, and the
                `pastLimitRegion` that would cover it, or null —, `unmatched`,
                `sharedIdentifiers`, `monitoredCount`, `tooManyToMonitor`). Exit status 0 when nothing is reported, 1 when
                anything is, 65 for a regions file or list that cannot be read. The stations come from
                `--ledger` (its verified stations; read only, a file or a PostgreSQL server) or from a station
                list, never both.
                """#),
        ])
}
