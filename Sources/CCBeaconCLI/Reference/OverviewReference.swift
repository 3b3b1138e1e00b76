import CommandLineKit

extension CommandLineTool {
    /// The EXAMPLES of `ccbeacon(1)`: a station's advertising data, and finding a command.
    static let overviewExamples = #"""
        The advertising data of one iBeacon identity, as every command encodes it:

        ```console
        $ ccbeacon encode --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 1 --minor 2 --power -51
        02 01 06 1A FF 4C 00 02 15 76 34 A4 85 17 32 4B 7D AB 44 D5 05 D8 A2 4C 60 00 01 00 02 CD
        ```

        The commands of a group, and where a subcommand's options are:

        ```console
        $ ccbeacon help ledger
        ccbeacon ledger: subcommands show, export, check, migrate
        …
          check    check a ledger's integrity and promises without trusting its indexes
        …
        'ccbeacon help ledger SUBCOMMAND' (or 'ccbeacon ledger SUBCOMMAND --help') shows its options.
        ```
        """#

    /// The sections of `ccbeacon(1)` that hold for every command.
    static let overviewSections: [ManualSection] = [
        ManualSection(
            "Usage",
            #"""
            Results go to stdout, diagnostics to stderr. Every command has `-h`/`--help`; `ccbeacon help
            COMMAND` shows the same. For the command groups `ledger` and `template`, `ccbeacon help ledger` (or
            `ledger --help`) lists the subcommands and `ccbeacon help ledger show` shows one. Options take
            `--opt value` or `--opt=value`; a value may be a negative number (`--power -59`) or `-`, but a
            word that looks like an option is never taken for a missing value (`--ledger --yes` or a mistyped
            `--ledger --jsno` is a usage error; write `--ledger=--yes` for a file of that name). The usage lines, the help and the
            "missing …" messages are generated from each command's option table. Every value given is
            converted and checked before the command opens a file, a ledger or a device: a usage error
            leaves the folder, the ledger and its lock, and the chips as they were (tested for every command
            with an invalid value of each option that has one).

            Exit status: **0** success, **1** the operation failed (a file cannot be read or written, a
            verification did not match, standard output cannot be written), **3** `provision` stopped with
            stations of the list left (pending or held; the summary says why), **64** usage error (the message
            is followed by the command's usage; also an input that is not a regular file or is larger than 256
            MiB, and an output that is a folder or would replace an input of the same run or a file a batch
            record lists), **65** bad input data (malformed HEX, bad identity, bad station list, broken
            template, a file that is not a usable ledger; the message names file, line and column, or the field
            or key path, and a hint says what to do).
            """#),
        ManualSection(
            "Inputs and outputs",
            #"""
            Inputs and outputs, for every command: an input must be a regular file — a FIFO, a folder or a
            device is refused before a byte is read (a FIFO with no writer can never hang a command), and so is
            a file larger than 256 MiB (exit 64, judged by its size alone, so a sparse or enormous file is never
            allocated): the largest real inputs are far smaller (a HEX of a 256 KiB flash is about 720 KB, a
            list of 100,000 stations about 10 MB, its `stations.json` about 40 MB), and parsing holds several
            times a file's size in memory. A file within the limit that the memory limit (`ulimit -v`) cannot
            hold is an error (exit 1), not a crash. Every output path is checked before anything is written: it
            may not be a folder (or anything but a regular file) nor end in `/` (exit 64), its folder must exist
            and be writable — a folder the command makes (`batch -o`, `template import -o`, `man-pages -o`)
            must have a writable folder as its nearest existing ancestor, never a file (exit 1) — and it
            may not be an input of the same run — the station list, the template's `template.json` or image, the
            image being converted, patched or imported, the ledger — compared by resolved path and by device and
            inode, so `./x`, `../d/x`, a symlinked folder or a hard link are caught (exit 64, naming the input).
            Nor is an output ever written where ccbeacon keeps state: over an SQLite database (a ledger, or
            another application's), at SQLite's `-wal`, `-shm` or `-journal` name of a database beside it, or at
            a name beginning `ccbeacon-journal-` (a bench's journal, `ccbeacon-journal-BENCH.jsonl`, and its place
            token, `.place`), in any case, or at the lock file beside any of these (`.NAME.lock`, which a running
            ccbeacon holds), whether a file is there yet or not — exit
            64, nothing changed. Nor does an output replace a file that may be a station list, whose
            identities may be nowhere else — judged by its start: a CSV header naming name, uuid, major and
            minor and no field of the registry `ledger export` writes, or JSON with "name" and "uuid" keys
            and no "chip"; or a file that cannot be read to tell (exit 64; `plan` replaces one only with the
            same list).
            A file that a batch record (`stations.json`, see batch) in the same folder lists — a station's
            `.hex` or `.bin`, or the record itself — is written only by `batch` into its own folder: every other
            command refuses it (exit 64, naming the record), since the record would no longer agree with its
            files; write elsewhere, or rerun `batch`. Every file is written to a temporary file in the same
            folder (`.NAME.ccbeacon-tmp.PID.MACHINE+RANDOM`, NAME shortened when the whole would pass the
            255-byte limit on file names), `fsync`ed, renamed into place and the folder `fsync`ed: after a crash
            or power cut the old file or the new one is there, never a mix. The next command writing into that
            folder removes what a killed run left: at once when its process ended on this machine (this boot
            and PID namespace), else — another host or container sharing the folder, a process ID reused — once
            a day old.
            Standard output is an output too: a result that does not reach it whole (a full disk, `>/dev/full`,
            a closed descriptor `>&-`, a file-size limit) is reported as `cannot write to standard output:
            REASON` and the command exits 1 — a command that failed for its own reason keeps its status.
            """#),
        ManualSection(
            "Identities",
            #"""
            Identity spellings, everywhere: UUID as `8-4-4-4-12` or 32 hex digits, any case; major and minor
            as decimal 0…65535 or `0x` hex; measured power as signed dBm (−128…127) or a `0x` byte (`0xC5` =
            −59). Without `--power`, `encode` uses −59 dBm; `generate`, `batch` and `provision` use the
            board's measured power at the station's TX power (see MEASURED POWER below); `verify` then
            checks no power.
            """#),
        ManualSection(
            "Measured power",
            #"""
            An iBeacon's last byte is its **measured power**: the RSSI a phone is expected to receive 1 m from
            the station, in dBm. iOS Core Location and the Android Beacon Library estimate distance and
            proximity (immediate / near / far) by comparing what they receive with it, so it must describe
            the station as it sends: each dB of TX power shifts what a phone receives 1 m away by 1 dB, and
            beacon vendors shift the calibrated value 1:1 with the TX setting (0 dBm → −59, −6 dBm → −65,
            −23 dBm → −82). A station sending at −6 dBm that claims −59 dBm makes every phone overestimate its
            distance about twofold. The right value for an installed station is measured: the average RSSI of
            at least 20 samples taken 1 m away (Radius Networks' rule).

            Without `--power` (or a list's `power` value), `generate`, `batch` and `provision` burn the
            board's figure at 0 dBm (`measuredPower` in `boards/NAME.json`, with its source; see
            `boards/README.md` in the source) shifted by the station's TX power — the `--tx-power` given,
            else the template's own — and clamped to −128…127; with `--template` instead of `--board`, the
            generic −59 dBm at 0 dBm; when the TX power is not known — a template without a TX-power field
            (imported TI-stack images), or one whose field holds no step of the chip — the 0 dBm figure as it
            is (labelled `board default` or `generic default`, without "+ TX shift"). `generate` prints the value and where it came from; `batch` records it
            in `stations.json` (`power`, and `powerSource`: `list`, `board default + TX shift`, `board
            default`, `generic default + TX shift` or `generic default`); `provision` records each station in
            the ledger with the power it burns, and each attempt with the power it burned and where that came
            from (`ledger export`'s `powerSource`: `calibration`, when it is the station's latest calibration
            from `calibrate --write --ledger`, else `registered`: the list's value or the board's as the station
            was registered). A value `calibrate --write --list` put into a list is the list's (`list`). A given value more than 10 dB from that expectation is kept
            (someone may have measured it) with a warning naming both numbers. `inspect` and `verify` (with
            `--template` or `--board`) say whether an image's value is the default for its TX power or not
            (then it was given or calibrated); `verify` still checks the power only when `--power` is given.
            """#),
    ]
}
