import CommandLineKit

extension ProvisionCommand {
    /// The man page's examples and reference beyond the help (every console example runs in the tests).
    static let manual = ManualPage(
        examples: #"""
            A bench of two debuggers burns the list:

            ```console
            $ ccbeacon provision stations.csv --board hm10 --devices all --yes
            EMU00…: burning 'Entrance' into 00:12:4B:00:25:4…
            …
            provisioned 8 station(s) in this run; 8 of 8 done, 0 pending, 0 held; ledger ./provisioning.sqlite
              stopped: no pending stations left
            ```

            The same run writing its events for another program:

            ```console
            $ ccbeacon provision stations.csv --board hm10 --devices all --yes --events events.jsonl
            ```

            The production line: each chip debug-locked after its burn, a label printed for each verified station:

            ```console
            $ ccbeacon provision stations.csv --board hm10 --devices all --yes --lock-debug --on-verified "./print-label.sh"
            ```

            A bench on a shared ledger:

            ```console
            $ ccbeacon provision stations.csv --board hm10 --devices all --yes --ledger postgresql://bench@db.example/beacons --bench hall-2
            ```
            """#,
        sections: [
            ManualSection(
                "The run",
                #"""
                `provision` checks the list and the template, records the stations in the ledger
                (`provisioning.sqlite` beside the list, or `--ledger FILE`; SQLite opens paths of up to 511
                bytes, so a new ledger's full path may have 460 and its name 204, room kept for the files beside
                it), then on every debugger of `--devices
                all|SEL,SEL` in parallel: waits for a chip ("attach the next one"; a new chip is recognised by its
                IEEE address), takes the next pending station, records the attempt, erases, programs, verifies
                (`--verify crc|read`), records the outcome and resets the chip to run.
                """#),
            ManualSection(
                "The ledger's promises",
                #"""
                What can never happen is refused by the ledger itself (SQLite, WAL, every change in a
                transaction): one identity on two chips, one chip with two stations, two stations with one name,
                two debuggers burning the same station, a station marked done without a verified burn, and a chip
                id that cannot identify a chip (anything but `XX:XX:XX:XX:XX:XX` in upper-case hex, and the
                all-`FF` and all-`00` addresses of an erased or invalid info page; triggers on the attempts table
                refuse them, so a caller that skips the check in code is refused too), and a station row no
                station can be (no name, not an upper-case UUID, a major or minor outside 0…65535, a power outside
                −128…127: triggers on the stations table); calibrations outside −128…127 or from fewer than 20
                samples, or of an unknown station, are refused by the table's checks and foreign key. The same
                promises hold on a shared ledger on PostgreSQL (see SHARED LEDGER ON POSTGRESQL below), kept there by CHECK constraints, partial unique indexes and foreign keys; one contract
                suite tries to break each through the API and with raw SQL on both (`LedgerContractTests`; the
                PostgreSQL cases run against the throwaway server `scripts/test` starts — `initdb` as the
                `postgres` user in a temporary folder, Unix socket only, no TCP, stopped and removed when the
                script exits, also on failure). A chip that
                already carries a verified station is refused and named unless `--reprovision` (the chip then gets
                another station and its old one is pending again — recorded only once there is another station to
                give it). With `--reprovision`, a chip whose station was calibrated in the ledger since it was
                burned (`calibrate --write --ledger`: its power now differs from the one the chip carries, which
                each attempt records) gets **that same station again** with the calibrated value: the old attempt
                is superseded and the new one started in one transaction, so there is no moment at which the
                station is pending while its chip carries it; the run says which stations wait for their chips
                and keeps waiting for them, and it does not exit 0 while one is left (exit 3, "calibrated, to burn
                again (attach their chips)"; `--json`: `toBurnAgain`). Without `--reprovision` a run names such
                stations in a note and leaves their chips alone. A chip that arrives debug-locked must be erased before its address can be read; if the
                ledger says it carried a station, that station is recorded as superseded and burned again — but
                once the ledger records chips this pool locked (`--lock-debug`, see DEBUG LOCK), a locked chip may be one of
                them, and only `--reprovision` erases it; without it the chip is set aside untouched. One
                ledger may hold several lists (the default ledger sits beside the list, so two lists in one folder
                share it): a run claims, releases and counts only its own list's stations, burned with its own
                settings, and leaves a chip interrupted with another list's station alone; its exit status is
                about its own list. A run killed while creating a new ledger never leaves it unusable: the ledger is built under a
                temporary name (`NAME.ccbeacon-creating-PID-RANDOM`) and linked into place; a leftover second name
                of exactly that shape is known for what it is (the read-only commands leave it, `provision`
                removes it once the ledger passed its checks), and a temporary ledger whose process is gone is
                removed with its journals. Any other second name of a ledger is refused. One `provision` runs per ledger at a time (a lock file beside the
                ledger's real path, `.NAME.lock`, held with `flock` for the run, so a second name of the ledger —
                a symbolic link, a symlinked folder — finds the same lock): a second run is refused at once, since
                it would take the first one's burns in progress for a crash's — to burn on several debuggers, give
                one run `--devices all` (or `--devices SEL,SEL`; naming one debugger twice, even by two names, is
                refused, exit 64). An attempt settled meanwhile is never overwritten by a late outcome: the
                late one is reported instead. A run ends as soon as no station of its list is left for a chip. A failed station is retried on a fresh chip
                (`--retries N`, default 1); one debugger failing never stops the others. A chip is known by its
                factory IEEE address; a chip whose address is erased (`FF:FF:FF:FF:FF:FF`) or all zero cannot be
                told apart from others, so it is never burned: the bench is told to set it aside ("SET THIS CHIP
                ASIDE"), and the next chip is told apart by the empty socket between them. With `--chip-id
                secondary` such a chip is named by its secondary address (last flash page) when that one is
                usable, and the burn keeps that address and reads it back; every erase of the run (a failed burn,
                a station not heard, a resume that finds another image) writes it back at once, so the chip keeps
                its name. A chip of another size than the
                template's chip (its CHIPINFO0.FLASHSIZE code, looked up in `boards/chips.json`, says so) is set
                aside the same way, unburned: the template's pages and lock bits are not its own (a locked one is
                erased first, as only an erase shows its size). The ledger records, for each verified
                attempt, which bytes were read back. A reset to run that fails after a recorded burn is reported
                and retried on the reopened debugger, never swallowed. A burn that fails never leaves the identity
                on a chip that is not recorded as carrying it: a chip that fails verification is erased before it
                is released (only then does the station go to another chip), and when a USB transfer fails in the
                middle of a burn — or the erase after a failed burn fails too — the chip's content is unknown, so
                the attempt is recorded as interrupted and the station held — whoever swaps what meanwhile — until
                that chip is attached again and checked.
                """#),
            ManualSection(
                "Hearing each station",
                #"""
                **`--scan-verify hci0`** hears each station before it counts as verified: after the burn is read
                back, the chip is reset to run and the controller listens (a passive scan as `scan --hci` does,
                up to `--scan-seconds`, default 5, stopping after 5 matching advertisements) for the image's
                advertiser address sending exactly the image's advertising data. Heard: the attempt is verified
                with `heard`, the RSSI count and median in the ledger and the export. Not heard — nothing on air,
                or other bytes from its address (named in the reason) — the chip is halted again, checked to be
                the very chip that was burned, and erased, and the attempt recorded as failed (`not heard on air
                within 5 s; the chip was erased`), so only a chip recorded as verified ever carries an identity.
                A chip taken off while the run listened is not erased (the one attached then is another chip):
                the attempt is recorded as interrupted and the station held until that chip comes back. A station
                not heard waits for the next run; `--retry-unheard` lets it go to the next chip (counting
                against `--retries`) — without it, an antenna or board fault would fail chip after chip. The
                controller is tried with a short scan before anything is burned, so a missing permission
                (CAP_NET_RAW), controller or Bluetooth is told first (exit 1, nothing burned); a controller that
                fails during the run stops it after the chip in hand (that chip erased and its attempt failed).
                Several debuggers share the one controller, one scan at a time. A chip from an interrupted run
                that is confirmed by its flash is listened for too, under the same rules (not heard: erased and
                failed, waiting for the next run; swapped meanwhile: nothing goes into the chip attached instead).
                Before each scan command, whatever queued up in the controller's socket meanwhile is drained, so
                another program's traffic cannot crowd out the answer. **Never run against a real controller**: it
                is tested with emulated debuggers and a scripted controller that hears what the emulated chips
                hold in flash while they run.
                """#),
            ManualSection(
                "Stopping and recovery",
                #"""
                Exit status: 0 only when every station of the list is done; when nothing is left to burn it says
                so and exits at once, without waiting for a chip. It exits 3 when it stopped with stations left —
                pending (failed ones included) or held — and the summary (and `--json`'s `stoppedBecause`) says why:
                a signal, no new chip within `--wait` (printed as given: `0.3 s`), no target chip at all within
                it (wiring and power), the ledger failing (a run stops when it cannot record), or every debugger
                failing (each with its reason). Ctrl-C, SIGTERM and SIGHUP finish the chip in progress, record it
                and stop (a second one stops at once, exiting 128 plus its number: 130 for Ctrl-C); a signal the
                parent ignores stays ignored, so `nohup
                ccbeacon provision …` survives a closed terminal.
                If the run is killed at any moment, the next run says what was interrupted and holds that station:
                when its chip is attached again, its flash is checked against the recorded image and the attempt
                completed (a chip that does not hold the recorded image — other settings, a calibration since, a
                half-written burn — is erased before the attempt is recorded as failed, and stays held if that
                erase fails or the chip was swapped during the check; a reprovisioning interrupted before its burn
                began leaves the chip's recorded station on it and erases nothing), or `--release-interrupted` lets the station go to a new chip — so an identity is never
                burned twice by accident. A station keeps its identity for life: a list that gives a station the
                ledger knows another UUID, major, minor or measured power (a power column, or another `--tx-power`)
                is refused before anything is burned, each such station named, exit 65 — as another list is on a
                shared pool. A station a run gave up on (`--retries`, or not heard without `--retry-unheard`) is
                still pending, and the summary says so ("no pending stations left but 1 given up after failing").
                `--yes` runs unattended (no questions), `--wait SECONDS` bounds each
                debugger's wait for a chip, `--json` prints a machine-readable summary (also when there is nothing
                to burn, with `stoppedBecause` "nothing to burn"). `--interval MS` and
                `--tx-power DBM` apply to every station as in `batch`; each station is burned with its own
                advertiser address, the list's or the one derived from its identity (the same one `batch` and
                `generate` give it).
                """#),
            ManualSection(
                "The ledger file",
                #"""
                The ledger is checked before it is trusted. It is opened by its real name (symbolic links are
                resolved), because SQLite keeps the journal (`-wal`, `-shm`) beside the name it is given; a ledger
                file with several hard links is refused (exit 65), since by a second name recent records in the
                journal would be missed and the history forked. The journal names themselves must be the
                ledger's own: a `-wal`, `-shm` or `-journal` beside the ledger that is a link, a folder, a file with
                several names or another SQLite database is refused (exit 65, nothing opened for writing), since
                SQLite writes over its journal and would overwrite what that name leads to. A record no station or attempt can be (a major of
                70000, a power of 200, no UUID — a damaged or hand-edited file) is reported with exit 65 by every
                reader, never a crash or a station left out. A ledger file carries its identity: SQLite's
                `application_id` is `0x4343424C` ("CCBL", ccbeacon ledger; `file` shows it as application id
                1128481356) and `user_version` is its schema version (2: version 1 plus each attempt's burned power and on-air
                check, and the `calibrations` table; 3: each attempt's bench; 4: each attempt's debug lock and the
                `hook_runs` table; 5: the `runs` table with each run's lease, each attempt's run, each station's
                `taken` state that claims find pending stations by, and triggers that refuse an outcome without the
                time it ended, as the server's CHECK does; an earlier ledger is read as it is and migrated when
                `provision` or `calibrate --write` opens it). A new ledger is created only where no
                file exists (built under a temporary name beside it and linked into place). An existing file is
                first opened read-only and refused with exit 65 — a message saying what the file is, a hint, not
                a byte written to it and (unless a crashed run left a `-wal` file) no `-wal` or `-shm` file
                created — when it is empty, not an SQLite
                database, another application's database (another `application_id`, or none and no ccbeacon
                tables), a ledger of a newer schema version than this ccbeacon knows, or damaged (`PRAGMA
                integrity_check`: pages, records and every index against its table — an index out of step
                would let a claim take a verified station again — and, where a `-wal` file is beside it, that log
                damaged inside: two commits of the log that hold their checksums after the frame (or the header)
                where SQLite stops reading, which SQLite would drop with every commit after them without a word
                (each commit is on the disk before the next is written, so neither a crash nor a power cut leaves
                that; frames that hold after a break but end in no commit are a transaction left open, and no
                damage). A log that merely ends early, or is damaged within its last two commits, cannot be told
                from a crash's or a power cut's and is read as SQLite reads it; `provision` also refuses a ledger that has lost one of its unique indexes or
                triggers). Only then does `provision` open it read-write; a ledger of an earlier ccbeacon (no
                `application_id`, no schema version) or of version 1 is migrated in one transaction: ids set,
                missing columns, tables, indexes and triggers added, its records kept. `ledger show`, `export` and `check` only read: they
                open the ledger read-only, never migrate or switch its journal mode, and work on a read-only file
                in a read-only folder. A WAL ledger without a `-wal` file beside it is read with SQLite's
                `immutable=1` (everything committed is in the main file, and SQLite would otherwise create `-wal`
                and `-shm` files it cannot remove, or refuse a read-only folder); with a `-wal` file — a running or
                crashed `provision` — SQLite's normal locking is used, which needs the `-shm` file or a folder
                where SQLite may create it (it then stays, as SQLite leaves it for a read-only connection).
                """#),
            ManualSection(
                "Live status",
                #"""
                On a terminal, `provision` shows a live status at the bottom of the screen, redrawn in place: one
                line per debugger — its name, port, what it does (waiting for a chip, chip attached, erasing /
                programming / verifying n %, listening on air, done, FAILED or HELD with the reason) and the station
                and chip in hand — and a totals line (done, pending, held, failed, stations per minute, time left);
                what the log says of an outcome or a chip set aside is printed above it and scrolls away. Lines are
                cut by the columns they take (wide characters count two). Piped or redirected — or on a terminal
                narrower than 40 columns or shorter than the status, or when `--events -` writes to the same
                terminal — it prints one log line per event instead. The terminal's size is read at every
                redraw: resized, the status is drawn anew at the new width, or gives way to log lines when the
                terminal became too small for it. (`LiveStatusTests` renders scripted runs to a
                fake terminal of fixed width and compares the frames; no line of the status ever wraps.)
                """#),
            ManualSection(
                "Events",
                #"""
                `--events FILE` appends every event of the run to FILE as one JSON object per line (`--events -`:
                standard output, and the text summary goes to standard error; not with `--json`, whose summary is
                the `run-finished` event). FILE is a new file (made without following a link) or one holding
                ccbeacon's events; any other file — a list, the ledger, a template's files, a journal — is refused
                (exit 64), as is standard output redirected into the list or the ledger. A run refused before it
                starts writes no events; a last line a full disk or a kill cut short is left, and the next run
                starts on a line of its own; events that could not all be written fail the run (exit 1, the
                outcomes are in the ledger). Every object has `schema` (1), `run` (32 hex digits: the run's id in the ledger, which its attempts
                and `ledger export` carry), `seq` (1, 2, … in the order written, from 1 in each run), `time` (UTC,
                `2026-12-01T12:00:00.000Z`), `elapsed` (seconds since the run started, monotonic) and `event`, then:

                | event | facts |
                |---|---|
                | `run-started` | `list`, `ledger` (a server without its password), `bench` (or null), `template`, `stations`, `pending`, `debuggers` |
                | `waiting` | `debugger` (waits for a chip) |
                | `chip-attached` | `debugger`, `chip` |
                | `burn-started` | `debugger`, `station`, `chip` |
                | `progress` | `debugger`, `station`, `chip`, `phase` (`erasing`, `programming`, `verifying`), `done`, `total` (bytes) |
                | `verified` | `debugger`, `station`, `chip`, `reason` (null; after an interruption `resumed: true`) |
                | `failed` | `debugger`, `station`, `chip`, `reason` |
                | `held` | `debugger`, `station`, `chip`, `reason` (the chip may carry the identity: held until it is attached again) |
                | `listening` | `debugger`, `station`, `chip`, `seconds` (`--scan-verify`) |
                | `burning-again` | `debugger`, `station`, `chip`, `burnedPower`, `calibratedPower` (`--reprovision`) |
                | `chip-refused` | `debugger`, `chip`, `station` (it already carries) |
                | `chip-set-aside` | `debugger`, `chip`, `reason` |
                | `erased-on-arrival`, `chip-of-another-list` | `debugger`, `station`, `chip` |
                | `reset-failed` | `debugger`, `chip`, `reason` |
                | `debugger-stopped` | `debugger`, `reason` |
                | `hook-finished` | `hook` (`on-verified`, `on-failed`), `station`, `chip`, `eventId`, `try`, `status` (`exit 0`, `exit 3`, `killed by signal 9`, `timed out after 30 s`, `could not start: …`), `delivered`, `output` (its last line, or null), `recorded` (false: the try could not be written to the ledger and runs again) |
                | `run-finished` | `verified` (stations), `failed` (station → reason), `listDone`, `listPending`, `held`, `stoppedBecause`, `status` (the exit status) |

                A verified event is written after the outcome is in the ledger. `EventStreamTests` validates every
                line of whole runs against this table.
                """#),
            ManualSection(
                "Hooks",
                #"""
                `--on-verified CMD` and `--on-failed CMD` run `/bin/sh -c CMD` for each verified or
                failed outcome, after it is committed to the ledger. The facts are passed only as environment
                variables, never spliced into the command line: a station named `$(rm -rf ~)` arrives as that text
                in `CCBEACON_STATION` (quote the variables in your script, `"$CCBEACON_STATION"`).

                | variable | value |
                |---|---|
                | `CCBEACON_EVENT_ID` | 32 hex digits, the same on every try of this hook run: a hook that must act once (print one label) keeps the ids it has done |
                | `CCBEACON_HOOK`, `CCBEACON_OUTCOME` | `on-verified` / `on-failed`; `verified` / `failed` |
                | `CCBEACON_HOOK_TRY` | 1, 2, … — tries recorded so far plus one (a try cut off by a kill is not counted: tell retries apart by the event id) |
                | `CCBEACON_STATION`, `CCBEACON_UUID`, `CCBEACON_MAJOR`, `CCBEACON_MINOR`, `CCBEACON_POWER` | the station and the identity burned (power in dBm, as burned) |
                | `CCBEACON_ADDRESS` | the advertiser address the chip sends with (empty when the template has none and `--address-mode secondary` is not used) |
                | `CCBEACON_CHIP`, `CCBEACON_DEBUGGER`, `CCBEACON_BENCH` | the chip's IEEE address, the debugger's name, the bench |
                | `CCBEACON_IMAGE_SHA256`, `CCBEACON_TEMPLATE`, `CCBEACON_ATTEMPT` | the image burned, its template, the ledger's attempt id |
                | `CCBEACON_REASON` | why it failed (or a note on a verified one; empty otherwise) |
                | `CCBEACON_DEBUG_LOCKED` | `1` when the chip was debug-locked after the burn, else `0` |
                | `CCBEACON_LEDGER` | the ledger (a server's URL without its password) |

                A hook runs in ccbeacon's folder with standard input from `/dev/null`, in a process group of its
                own, with no descriptor but 0–2 and every signal at its default; its output is collected, not
                printed (its last line is shown when it fails). Hooks run one at a time, in the order their outcomes
                were recorded, on a thread of their own, so burning goes on meanwhile. `--hook-timeout SECONDS`
                (default 30) ends a hook still running — SIGTERM to it and everything it started, SIGKILL 2 s
                later.

                Delivery is at least once and survives a crash. Each hook run is recorded in the ledger in the very
                transaction that records its outcome (`hook_runs`: event id, attempt, hook, bench, tries, last
                status, when delivered) and counts as delivered only when a try exits 0. A hook that fails — a
                non-zero exit, a signal, the timeout, or one that cannot start — is reported (a log line with its
                last output, a `hook-finished` event), never undoes a burn, stays pending, and after the summary
                (`hooks: 3 delivered, 1 failed`, and how many a stop left unrun; `--json`: `hooks` with
                `delivered`, `failed`, `notRun`) the run exits 1 (3 when stations are left). A try that exited 0 but
                could not be recorded (the ledger's server away) counts as failed: it runs again. The
                next `provision` of the same bench (`--bench`, default the host name; on a file ledger, any next run for
                those of a run without a bench) runs its pending hook runs
                first, before any chip — also when nothing is left to burn — each at most once per run; a run
                without that hook leaves them pending and says so, and `ledger show` lists them per bench. A bench
                killed between a commit and its hook, during the hook, or after the hook but before its try was
                recorded runs that hook again next time, with the same event id; a Ctrl-C leaves the hooks not yet
                run pending, and waits for the hook in hand (saying so, and for how long at most); a second Ctrl-C
                kills that hook and everything it started as the run ends (as `--hook-timeout` does) — also what
                left its process group (`setsid`, `timeout`): they are found by their parent process, each stopped
                as it is found (a process tracing the run is killed, never stopped); further stops wait for that,
                at most 10 s, after which the hook's group is killed and the run ends anyway — so that the hook
                does not run beside its own retry. Known limit: what a hook leaves running when it exits, or
                started through a process that has ended (a daemon, `setsid -f`; at --hook-timeout also what a
                member started just before it ended), is its own: ccbeacon neither waits for it nor ends it. A hook that must act once keeps the event ids it has
                done. An outcome a bench kept in its journal while the server was away gets its hook run
                when the journal is recorded, whatever hooks the recording run has (the journal line says the run
                had one). On a PostgreSQL ledger the hook runs are on the server, each bench running its own.
                (`ProductionLineUSBTests` kills a bench through real libusb at those exact moments and at others
                from outside; in the end every verified station's hook ran under exactly one event id, and none ran
                for another station.)
                """#),
            ManualSection(
                "Debug lock",
                #"""
                `--lock-debug` locks each chip's debug interface once its burn is verified (and,
                with `--scan-verify`, heard): DBGLOCK — bit 7 of the last flash byte, 0 locks — is written, the lock
                bytes are read back, and the chip reset into debug mode must then report the lock (READ_STATUS
                `DEBUG_LOCKED`). The ledger records it (`ledger show`: `debug-locked`; export and hooks:
                `debugLocked`). A chip whose lock does not take is erased and its attempt failed; the station goes
                to the next chip. With `--scan-verify` the chip heard running is halted again and must still be the
                same chip; one taken off in between stays verified but unlocked, and the attempt says why. A locked
                chip cannot be read until a chip erase clears its whole flash: a locked chip still on the debugger
                after its burn is known as that chip (no chip was taken off since) and left alone, and a locked
                chip that arrives while the ledger records chips this pool locked is set aside untouched ("SET THIS
                CHIP ASIDE … it may carry a station"); `--reprovision` erases it (which unlocks it) and, when its
                address shows it carried a station, supersedes that station and burns it again. Unmodified cc-tool
                reads the emulated chips a 200-station run leaves and reports each one "Target is locked."
                """#),
            ManualSection(
                "The secondary address",
                #"""
                Templates of TI's BLE stack (imported with `template import`) have no
                advertiser-address field: the stack advertises with the chip's own address. With
                `--address-mode secondary` each station's address — the list's `address` column, or the one
                derived from its identity — is written as the chip's secondary address, 6 bytes least significant
                first at flash size − 22 (0x3FFEA–0x3FFEF on the CC2541F256, just below the lock bits), read back
                with the identity, and recorded as the attempt's advertiser address (export `address`, hooks
                `CCBEACON_ADDRESS`); `--scan-verify` then listens for the station from that address. Unmodified
                cc-tool reads it back (`cc-tool -a`: `secondary: C0:FF:EE:00:12:34`). The mode is refused for a
                template that has an advertiser-address field of its own (the reference firmware advertises that
                one and would never look at the secondary address) and with `--chip-id secondary` (which names
                chips by the very address it would overwrite).

                Which TI stacks advertise with it: TI's documentation does not say per version. The one TI
                statement found (TI E2E forum, thread 88011 "Chip ID", CC2540, 2011, BLE-Stack 1.0/1.1) says that
                `HCI_Read_BD_Addr` returns the address in use, "which may be the primary or secondary address, or
                another address set with `HCI_EXT_SetBDADDRCmd`" — so the stack takes a programmed secondary
                address at start-up; the release notes of BLE-Stack 1.0–1.3.2 do not mention it, 1.4.0's
                `hal_board_cfg.h` defines the field in the last page (`HAL_FLASH_IEEE_PAGE`, `HAL_FLASH_IEEE_OSET`),
                the choice itself is made inside the stack's precompiled link-layer library, and an application
                that calls `HCI_EXT_SetBDADDRCmd` overrides it. Nothing in an image names its stack version (the
                OAD header carries the application's), so ccbeacon cannot tell a template whose stack would ignore
                the address: run the first stations of a new template with `--scan-verify`, which fails a station
                not heard from its secondary address. Bluegiga BLE112/113 modules keep their own address and a
                licence key in this last page; a burn erases the chip, licence included. **Never run on real
                hardware**: the lock and the secondary address are tested on the emulator and read back by cc-tool.
                """#),
            ManualSection(
                "Shared ledger on PostgreSQL",
                #"""
                A deployment of thousands of stations is burned on several benches at once from one list, with one
                ledger on a PostgreSQL server (libpq; Debian `libpq5` at run time).

                **Setting up the database** (once, as the server's administrator): a role for the benches and a
                database it owns; the first `provision` creates the schema `ccbeacon` there and the ledger in it
                (every session's search path is set to that schema after connecting, so a per-user schema, a
                role's `search_path` or a URL's `options` cannot make a second pool of one database; the database
                may hold other schemas):

                ```sh
                sudo -u postgres createuser --pwprompt bench
                sudo -u postgres createdb --owner bench beacons
                ```

                Only the schema's owner may create anything in it and owns all of it: a bench refuses a ledger
                whose schema holds anything else (a function or operator there could stand in for a built-in) or
                lets another role create there. Benches under other roles get `USAGE` on the schema and `SELECT,
                INSERT, UPDATE` on its tables and `USAGE` on its sequence — never `CREATE`. Text goes to the
                server as UTF-8 whatever `PGCLIENTENCODING` or the URL asks. A ledger an earlier build kept in
                another schema (`public`) is refused, not started afresh beside, with the `ALTER TABLE … SET
                SCHEMA ccbeacon` statements that move it.

                **The URL**: `--ledger postgresql://USER@HOST[:PORT]/DB?PARAMETERS` (also `postgres://`), any libpq
                parameter (`sslmode=verify-full`, `sslrootcert=…`, `connect_timeout=…`, `host=/run/postgresql` for a
                Unix socket). The password comes from the URL, `PGPASSWORD` or `~/.pgpass` and is never printed:
                messages name the server as libpq reads it, `postgresql://USER@HOST:PORT/DB`, and a URL libpq
                cannot read is never echoed. ccbeacon sets `connect_timeout=10`, TCP keepalives and
                `tcp_user_timeout=30000` unless the URL says otherwise, so a server that stops answering is given
                up on rather than waited for forever, and names each bench's session `ccbeacon BENCH`
                (`application_name`), so `pg_stat_activity` shows which bench is which. `provision`, `ledger show|export|check|migrate` take a URL;
                `calibrate` and `scan` read ledger files (copy one with `ledger migrate`).

                **Benches and runs**: each bench has a name, `--bench NAME` (letters, digits, `.`, `_`, `-`;
                default the host name; a host name that cannot be one leaves a file ledger's run without a bench,
                with a note, and is refused on a shared ledger), recorded on every attempt (SQLite ledgers record
                it too). A bench name is a
                label; what protects a burn is its **run**. Every `provision` registers a run in the ledger (a
                random id, the bench, the host, the process, and a **lease** on the database's clock, `--lease
                SECONDS`, default 90) and renews the lease every sixth of it; every attempt names the run that owns
                it. Each change of an attempt — a claim, an outcome, a release, a supersession — is made only inside
                a transaction that finds the run's lease still valid (and this process checks its own clock first,
                so a paused process finds its lease over before it sends anything, and again after a claim's COMMIT:
                a claim committed after the lease ran out is left in progress and no chip is burned for it). The
                own clock is `CLOCK_BOOTTIME`, which counts the time a suspended machine slept. A run whose lease ran out is
                over for good: it cannot renew, record or claim. One live run per bench name: a second `provision`
                as the same bench is refused while the first's lease holds (exit 65, "another process is running
                as bench … its lease holds for N s more"), and a lock file beside the list keeps two runs of one
                bench on one machine apart. `ledger show` adds a BENCH column and one line per bench (done, held,
                burning, failed attempts). Claims take the first pending station with `SELECT … FOR UPDATE SKIP
                LOCKED` (benches never wait on each other) and look at it again under the row lock; every change
                is one transaction; serialization failures and deadlocks are run again with back-off. No statement
                waits more than 5 s for a lock another session holds (a bench paused inside a change): it fails
                and its transaction is tried again, up to 8 times; recovery never locks a live run's row and skips
                one whose owner holds it, so a paused bench stops no other.

                **Recovery takes only what is over**: attempts left in progress are taken for interrupted (and
                their stations held for every bench until the same chip is attached anywhere — its flash decides —
                or `--release-interrupted`) only once their run is over: its lease ran out, it ended, or its
                process on this machine is gone (same boot and process namespace, process id no longer there, or
                killed and not yet reaped). A
                live run's burn is never recovered, by another bench, by `--release-interrupted` or by a second
                process under the same name. On a pool, `--release-interrupted` releases a held station only once
                no outcome of it can wait unseen: the run that was burning it may have kept the attempt's outcome in
                its bench's journal (its server away), and only a run of that bench from that folder on that machine
                records it. So each bench run leaves a random token beside its journal
                (`ccbeacon-journal-BENCH.place`), recorded with the run on the server together with where that
                file is (its inode and inode change time, and its folder's inode); a run that records its
                folder's journal then settles the run whose token it found there, in that very file in that very
                folder (a copy of the folder, hard-linked or not, or one restored from a backup is another folder;
                the folder renamed is the same). A run holds its folder open from its start and writes its
                journal into that very folder, wherever it is renamed to meanwhile (the message names it
                there), never into another folder that took its name (a copy left at its path, the bare mount
                point of a stick taken out); a folder deleted meanwhile, or a journal that cannot be written there
                (its name taken by a folder, a FIFO or a link), gets no line: the run names the chip whose outcome
                is then recorded nowhere and takes its token away (removed, or emptied where the folder takes no change
                of names), so its station stays held until that chip is attached again or `--journal-lost`; where
                neither can be done the message says so, and which file to remove before the bench runs again. A held station is released only
                by a run of the bench that was burning it, once that run is settled (or when it was a run of an
                earlier ccbeacon, which recorded no journal place). Another bench's held station stays held, and the
                run says so ("kept 's1' held: bench 'b' was burning it on chip … and may keep its outcome in its
                journal ('/lab/ccbeacon-journal-b.jsonl' on host h); run bench 'b' again (it records its journal
                first), with --release-interrupted to release it"); so does the same bench run from another folder
                (a copy of the list or of the folder, its stick taken out) or on another machine under the same name,
                the list at the same path or not ("kept 's1' held: this bench's run that was burning it on chip …
                kept its journal at '…' on host h, which this run has not recorded …"). A bench whose machine or
                folder is lost for good is released by a run under its name with `--release-interrupted
                --journal-lost`, which releases that bench's held stations whatever journal their run kept — never
                another bench's, and not while a file is at that journal's path on this machine (it may be the
                journal: run the bench from that folder) — the chip named ("chip … may still carry its identity")
                must then be erased or set aside, and an outcome that journal held is lost with it. A damaged or
                removed `.place` file is taken for another folder's: its run's stations stay held until
                `--journal-lost`. Known limits: a block copy of a bench's disk (a cloned card) made while the bench
                was running carries the running bench's token in the same inodes, without the outcomes it journals
                later, and a run from such a copy settles it; on a file system without lasting inode numbers (FAT,
                a USB stick) a run after the stick was mounted again does not find its last run's place, and that
                run's held stations wait for `--journal-lost` (the message says so), as do those of a run whose
                folder was moved to another file system, or whose `.place` was rewritten or had its mode changed. A file ledger releases
                at once (its one-run lock means no other run is alive). **Upgrading a pool while benches run**: the first bench of this
                ccbeacon migrates the pool (an earlier ccbeacon then refuses it, so none starts after), but one
                already running keeps burning; it held its bench's session lock while it ran, and as long as that
                lock is held a process of this ccbeacon is refused that bench name and no recovery takes that
                bench's attempts. A station's `taken` state an earlier ccbeacon left behind meanwhile is put right
                by every run when it starts (`ledger check` says so rather than calling the ledger damaged). Recovery and release say which chip may still carry the identity
                ("chip … may still carry its identity: erase it (ccbeacon erase) or set it aside").

                **A run that lost its lease** — paused past it (Ctrl-Z, a debugger, a frozen machine), or cut off
                from the server for longer — records nothing more and burns nothing more: it erases the chip in its
                hand (only if it is still the chip attached), so that the identity is only where the ledger says,
                and stops with exit 1 naming the station and the chip ("lease lost: …; 's12' was not recorded on
                chip 00:12:4B:…, so the chip was erased"); if the erase fails it names the chip to set aside. Give
                `--lease` more than `--server-wait` (the defaults, 90 and 60, do): a server back within the wait
                then still finds the lease held, and the burn is recorded.

                **One list per pool**: the first bench registers the list; a bench starting with the same list
                (same names, same identities) attaches to the pool; another list is refused, nothing registered,
                the differences named ("3 station(s) of the list are not in the pool: …; 1 station(s) of the pool
                are not in the list: …; 1 station(s) have another identity in the pool: …"), exit 65.

                **When the server goes away**: a lost connection — while connecting, while libpq sets the session
                up (its encoding, its search path), at BEGIN, in a statement or at COMMIT; the server restarted or
                stopped, the backend terminated, the network gone — is made again and the transaction run again,
                with back-off, for up to `--server-wait SECONDS` (default 60). A bench started while its server
                does not answer waits for it the same way; a server that answers and refuses (a wrong or missing
                password, no such database: its SQLSTATE says so) is told at once, and so is everything to `ledger
                show|export|check`. A refusal libpq makes on its own without a SQLSTATE (TLS settings the server
                cannot meet, say) is waited for like an absent server. A change whose COMMIT's answer was lost finds its own
                work when run again (an outcome already recorded, an attempt its debugger already started) instead
                of doing it twice. The bench finishes the chip in hand and starts no new chip until its outcome is
                recorded (a station not claimed on the server is never burned). If the server stays away longer,
                the outcome goes into the bench's journal, `ccbeacon-journal-BENCH.jsonl` beside the list file
                (symbolic links to it resolved; a journal an earlier ccbeacon left beside a link to the list stops
                the run, naming where to move it; one JSON
                line per outcome, flushed to the disk), and the bench stops (exit 1) saying so; the next `provision`
                of that bench records the journal first ("recorded from the journal: …"), once its list is known
                to be the pool's, removes it, then goes on. Each line names the ledger (a random id made with it),
                the bench, the attempt, its station and its chip, and is recorded only onto that very attempt of
                that ledger: another ledger's or another bench's journal, or a line whose attempt is another
                station's or chip's, stops the bench with both facts and the journal kept. An outcome is journaled
                only while the run's lease holds by its own clock (until then no run can have taken the attempt
                over); past it, the run erases the chip instead (see "A run that lost its lease"). A journal larger
                than 16 MiB is refused unread. A journal line cut short by a kill is ignored (its attempt is still in progress on the server,
                so the station is held until its chip is checked); a journaled outcome the server meanwhile
                settled otherwise stops the bench with both facts and keeps the journal for a person to look at.
                """#),
        ])
}
