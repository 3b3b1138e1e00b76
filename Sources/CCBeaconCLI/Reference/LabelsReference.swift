import CommandLineKit

extension LabelsCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            ```console
            $ ccbeacon labels stations.csv --board hm10 -o labels.svg
            wrote labels.svg: 8 labels
            8 labels on 1 page, sheet a4-3x8: 3×8 labels of 70×37.125 mm on a 210×297 mm page
            $ ccbeacon labels --ledger provisioning.sqlite --sheet single --label-size 62x29 -o printer.svg
            wrote printer-1.svg: label 1
            …
            wrote printer-8.svg: label 8
            8 labels on 8 pages, sheet single: one 62×29 mm label per page
            ```
            """#,
        sections: [
            ManualSection(
                "Labels",
                #"""
                One label per station — its name, UUID (over two lines), major, minor, advertiser address and a QR
                code — as SVG pages to print at 100 % ("actual size", never "fit to page"): page and labels are
                sized in mm. From a list, every station is labelled (the list is checked whole as for every command,
                each problem reported with its line and column, exit 65) and the address is the list's, or else the
                one `batch` and `provision` derive from the identity — when the template (`--template` or `--board`,
                as for `batch`; required) has an advertiser-address field; with one that has none, only the list's
                addresses appear. From `batch`'s record (`labels OUT/stations.json -o labels.svg`): its stations
                with the addresses batch gave them, under the template the record names (no `--board` needed;
                `--template` or `--board` may name the same template, another is a usage error) — the same labels
                as the list with its template. From a ledger (`--ledger FILE`, opened read-only, or a `postgresql://` server):
                the verified stations, each with the address recorded on its verified attempt; `--all` adds every
                other station, with the address of its latest attempt (none if never attempted). A note on stderr
                counts the labels left without an address.
                """#),
            ManualSection(
                "The QR string",
                #"""
                **The QR string**, for any program that reads the labels:

                ```
                ibeacon:UUID/MAJOR/MINOR?name=NAME&addr=ADDRESS
                ```

                - `UUID` in upper case, `8-4-4-4-12`; `MAJOR` and `MINOR` in decimal (0…65535, no leading zeros).
                - `NAME` the station's whole name, percent-encoded: ASCII letters, digits, `-`, `.`, `_` and `~` as
                  they are (RFC 3986's unreserved characters), every other byte of the name's UTF-8 as `%XX` in
                  upper-case hex — so `Hall A` is `Hall%20A`, `R&D` is `R%26D`, `Küche` is `K%C3%BCche`. The
                  string is therefore plain ASCII: decoders that guess the character set of a QR code's bytes
                  (zbar does) all read it alike.
                - `&addr=ADDRESS` only when the address is known, `AA:BB:CC:DD:EE:FF` in upper case.
                - Nothing else, in this order. To read one: split at the first `?`, the rest at `&` and each
                  parameter at its first `=`, and percent-decode the name.

                The code is error-correction level M (a scratched label still reads) in 8-bit mode, the smallest
                version that holds the string (version 5 or 6 for short names), drawn as one path with
                `shape-rendering="crispEdges"` and a quiet zone of 4 modules. A name too long for its line is cut
                with `…` on the label (the code holds all of it); characters that would not show (control
                characters, bidirectional overrides) are written visibly, `\x1b`, `\u{202E}`; every text of a label
                goes through one XML escaper. Text is set in a monospaced font (DejaVu Sans Mono, Liberation Mono,
                …) so its width is known, and each label is clipped to its own rectangle: nothing reaches the
                neighbour.
                """#),
            ManualSection(
                "Sheets and files",
                #"""
                | `--sheet` | page | labels |
                |---|---|---|
                | `a4-3x8` (default) | A4 | 3 × 8 of 70 × 37.125 mm, edge to edge (Herma 4464 and its look-alikes) |
                | `a4-3x7` | A4 | 3 × 7 of 70 × 42.3 mm, the grid 0.45 mm from the top (7 × 42.3 = 296.1 mm; Avery Zweckform 3475 and its look-alikes) |
                | `single --label-size WxH` | the label | one per page, for label printers (`62x29`: for example Brother's 29 × 62 mm address labels) |
                | `PAGE:GRID`, e.g. `210x297:3x8` | `W`×`H` mm | `C`×`R` labels; `--label-size WxH` (default: as large as the page allows), `--gap ACROSS,DOWN` between them (default `0,0`), `--margin TOP,LEFT` for the first one (default: the grid centred). Avery 5160 on US Letter: `--sheet 215.9x279.4:3x10 --label-size 66.675x25.4 --gap 3.175,0 --margin 12.7,4.7625` |

                Sizes are in mm, decimals with a point, up to 1000; labels must be large enough for a code of 10 mm
                and text of 1.2 mm (about 30 × 15 mm is the smallest such label). Every refusal is a usage error
                (exit 64) that says what is accepted. A station whose code would have modules under 0.25 mm on its
                label — a long name needs a large code — is refused before any page is written (exit 65, with the
                module size): codes with 0.18 mm modules decoded only from 600 dpi renderings, 0.28 mm ones from
                300 dpi; give it a larger label or a shorter name.

                **Files**: one page goes to `-o OUT.svg` itself; more pages to `OUT-1.svg`, `OUT-2.svg`, … with the
                numbers padded to one width (`OUT-01.svg` … `OUT-12.svg`), each listed as it is written. Like every
                output, each page is checked first (never the list, the ledger or its `-wal`/`-shm`, a template's
                files or a batch's) and written atomically; an existing file of that name is replaced. Files an
                earlier run left under these names (`OUT.svg` or `OUT-N.svg`, not written by this run) are named
                on stderr and left alone.
                """#),
        ])
}
