import Foundation
import Storage
import TestSupport
import Testing

@Suite(.serialized, .enabled(if: Tools.available, "needs umockdev and the built executables"))
struct InterruptTests {
    /// Ctrl-C — and SIGTERM and SIGHUP alike — finishes the chip in progress, records it and
    /// stops: no attempt is left in progress, the summary says why, the exit status is 3 (stations
    /// left), and the next run goes on from there.
    @Test(arguments: [(SIGINT, "Ctrl-C (SIGINT)"), (SIGTERM, "SIGTERM"), (SIGHUP, "SIGHUP (the terminal closed)")])
    func aStopSignalStopsCleanlyAndTheNextRunResumes(signal: Int32, name: String) throws {
        let work = try Workspace()
        defer { work.remove() }
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 200)
        let arguments = [Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.5"]
        let bench = try ChildProcess(Tools.emulator, ["--bench", "--chips", "400", "--"] + arguments, in: work.url)
        // Wait until ccbeacon has burned a station, then stop it.
        #expect(bench.waitUntil("verified"), "\(bench.output)\n\(bench.errors)")
        // Only this test's ccbeacon: other tests run ccbeacon at the same time.
        _ = try ChildProcess.run(
            "/usr/bin/pkill", ["-\(signal)", "-f", "^\(Tools.ccbeacon) provision \(list) "], in: work.url)
        let processStatus = bench.wait(timeout: 60)
        let text = bench.output
        #expect(processStatus == 3, "\(text)\n\(bench.errors)")
        #expect(text.contains("provisioned "))
        #expect(text.contains("stopped: \(name) after the chip in progress"), "\(text)")
        let (exported, states) = try ProvisioningThroughLibUSBTests.ledger(work)
        #expect(!states.contains { $0["state"] as? String == "in-progress" || $0["state"] as? String == "held" })
        #expect(exported.count > 0 && exported.count < 200, "stopped part-way (\(exported.count) done)")
        // The next run carries on with the pending stations only.
        let rest = try Tools.ccbeacon(
            Array(arguments.dropFirst()), options: ["--bench", "--chips", "400", "--ieee", "00:12:4B:77:00:00"],
            in: work.url)
        #expect(rest.status == 0, "\(rest.errors)")
        #expect(try ProvisioningThroughLibUSBTests.ledger(work).exported.count == 200)
    }

    /// A stop while a hook runs waits for that hook and says so; a second stop ends the run at
    /// once and takes the hook with it. The second Ctrl-C used to leave the hook running on its
    /// own, so that the next run ran the same event again beside it (a label printed twice) — and
    /// then what the hook ran in a group of its own (`setsid`, `timeout`).
    @Test(arguments: ["", "setsid -w ", "timeout 100 "])
    func aSecondStopEndsTheHookInHand(leaving: String) throws {
        let work = try Workspace()
        defer { work.remove() }
        let (bench, pattern) = try Self.benchInHook(
            work, "\(leaving)sh -c 'echo $$ > hook.new && mv hook.new hook.pid && exec sleep 60'", ready: "hook.pid")
        let hook = (try? String(contentsOfFile: work.path("hook.pid"), encoding: .utf8)).flatMap {
            Int32($0.trimmingCharacters(in: .whitespacesAndNewlines))
        }
        let pid = try #require(hook, "the hook never ran: \(bench.output)\n\(bench.errors)")
        _ = try ChildProcess.run("/usr/bin/pkill", ["-INT", "-f", pattern], in: work.url)
        #expect(bench.waitUntil("stopping once the hook in hand ends: on-verified"), "\(bench.errors)")
        #expect(!LocalProcesses.hasEnded(Int(pid)), "the first stop waits for the hook")
        _ = try ChildProcess.run("/usr/bin/pkill", ["-INT", "-f", pattern], in: work.url)
        #expect(bench.wait(timeout: 60) == 128 + SIGINT, "\(bench.errors)")
        let gone = Date().addingTimeInterval(10)
        while !LocalProcesses.hasEnded(Int(pid)), Date() < gone { usleep(10_000) }
        #expect(LocalProcesses.hasEnded(Int(pid)), "the hook outlived its run")
    }

    /// A third stop while the second one's sweep ends the hook's processes waits for the sweep:
    /// it used to exit at once, leaving what the sweep had stopped stopped for ever, and what it
    /// had not reached running.
    @Test func aThirdStopWaitsForTheSweep() throws {
        let work = try Workspace()
        defer { work.remove() }
        let (bench, pattern) = try Self.benchInHook(
            work, "for i in $(seq 1 120); do setsid sleep 300 & echo $! >> children; done; echo > ready; wait",
            ready: "ready")
        let ccbeacon = try Self.firstStop(bench, pattern, in: work)
        kill(ccbeacon, SIGINT)
        // The third a moment later (two at once would be one: a pending signal is not counted
        // twice), while the sweep is at work: whenever it comes, nothing of the hook is left.
        usleep(5_000)
        kill(ccbeacon, SIGINT)
        #expect(bench.wait(timeout: 60) == 128 + SIGINT, "\(bench.errors)")
        let children = try String(contentsOfFile: work.path("children"), encoding: .utf8).split(separator: "\n")
            .compactMap { Int($0) }
        #expect(children.count == 120)
        let gone = Date().addingTimeInterval(10)
        while !children.allSatisfy(LocalProcesses.hasEnded), Date() < gone { usleep(10_000) }
        let left = children.filter { !LocalProcesses.hasEnded($0) }
        for pid in left { kill(pid_t(pid), SIGKILL) }
        #expect(left.isEmpty, "\(left.count) of the hook's processes outlived the run (stopped or running)")
    }

    /// Whether this machine lets a process trace another (strace installed, ptrace allowed).
    static let canTrace: Bool = {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/strace") else { return false }
        return
            (try? ChildProcess.run("/usr/bin/strace", ["-o", "/dev/null", "/bin/true"], in: URL(fileURLWithPath: "/")))?
            .status == 0
    }()

    /// A hook that traces its own run (`strace -p $PPID`) is ended with the rest, not stopped: the
    /// sweep stopped it, and the run then waited on its stopped tracer at its next system call,
    /// for ever (a SIGKILL did not end it).
    @Test(.enabled(if: canTrace, "needs strace and ptrace"))
    func aHookThatTracesItsRunIsEndedWithTheRest() throws {
        let work = try Workspace()
        defer { work.remove() }
        try Self.stopTwiceWithATracer("strace -f -p $PPID -o /dev/null", in: work)
    }

    /// A tracer that traces from a thread of its own (its `TracerPid` is that thread, not its
    /// process) is not stopped either: it was, and the run hung for ever (review). The tracer,
    /// compiled here: a thread seizes every task of the process given, then passes each stop on.
    @Test(
        .enabled(if: canTrace && FileManager.default.isExecutableFile(atPath: "/usr/bin/gcc"), "needs gcc and ptrace"))
    func aHookThatTracesItsRunFromAThreadIsEndedWithTheRest() throws {
        let work = try Workspace()
        defer { work.remove() }
        let source = work.path("tracer.c")
        try Self.threadTracer.write(toFile: source, atomically: true, encoding: .utf8)
        let compiled = try ChildProcess.run(
            "/usr/bin/gcc", ["-O1", "-pthread", "-o", work.path("tracer"), source], in: work.url)
        try #require(compiled.status == 0, "\(compiled.errors)")
        try Self.stopTwiceWithATracer("./tracer $PPID", in: work)
    }

    /// A bench whose hook runs `tracer` (tracing the run) and then sleeps, stopped twice: the run
    /// ends as a second stop ends it (130), the tracer with it.
    static func stopTwiceWithATracer(_ tracer: String, in work: Workspace) throws {
        let (bench, pattern) = try Self.benchInHook(
            work, "\(tracer) & echo $! > tracer.pid; sleep 0.5; echo > ready; exec sleep 100", ready: "ready")
        let pid = try #require(
            Int(
                try String(contentsOfFile: work.path("tracer.pid"), encoding: .utf8).trimmingCharacters(
                    in: .whitespacesAndNewlines)))
        kill(try Self.firstStop(bench, pattern, in: work), SIGINT)
        #expect(bench.wait(timeout: 30) == 128 + SIGINT, "\(bench.errors)")
        let gone = Date().addingTimeInterval(10)
        while !LocalProcesses.hasEnded(pid), Date() < gone { usleep(10_000) }
        if !LocalProcesses.hasEnded(pid) { kill(pid_t(pid), SIGKILL) }
        #expect(LocalProcesses.hasEnded(pid), "the tracer outlived the run")
    }

    /// The C source of the thread tracer.
    static let threadTracer = #"""
        #include <dirent.h>
        #include <pthread.h>
        #include <signal.h>
        #include <stdio.h>
        #include <stdlib.h>
        #include <sys/ptrace.h>
        #include <sys/wait.h>
        static pid_t target;
        static void *trace(void *unused) {
            char path[64];
            snprintf(path, sizeof path, "/proc/%d/task", target);
            DIR *tasks = opendir(path);
            struct dirent *entry;
            while (tasks && (entry = readdir(tasks))) {
                pid_t task = atoi(entry->d_name);
                if (task > 0 && ptrace(PTRACE_SEIZE, task, 0, PTRACE_O_TRACESYSGOOD | PTRACE_O_TRACECLONE) == 0)
                    ptrace(PTRACE_INTERRUPT, task, 0, 0);
            }
            for (;;) {
                int status;
                pid_t task = waitpid(-1, &status, __WALL);
                if (task < 0) return unused;
                if (!WIFSTOPPED(status)) continue;
                int stop = WSTOPSIG(status), pass = 0;
                if ((status >> 16) == 0 && stop != (SIGTRAP | 0x80) && stop != SIGTRAP) pass = stop;
                ptrace(PTRACE_SYSCALL, task, 0, pass);
            }
        }
        int main(int argc, char **argv) {
            if (argc < 2) return 2;
            target = atoi(argv[1]);
            pthread_t thread;
            pthread_create(&thread, 0, trace, 0);
            pthread_join(thread, 0);
            return 0;
        }
        """#

    /// The ccbeacon `pattern` finds, stopped once (SIGINT) and saying it waits for the hook in hand.
    static func firstStop(_ bench: ChildProcess, _ pattern: String, in work: Workspace) throws -> Int32 {
        let found = try ChildProcess.run("/usr/bin/pgrep", ["-f", pattern], in: work.url)
        let ccbeacon = try #require(Int32(found.output.split(separator: "\n").first ?? ""), "\(bench.errors)")
        kill(ccbeacon, SIGINT)
        #expect(bench.waitUntil("stopping once the hook in hand ends: on-verified"), "\(bench.errors)")
        return ccbeacon
    }

    /// A bench burning three stations with `hook` on each verified one, once the hook has written
    /// the file `ready` (or the bench ended, or a minute passed): the bench, and the pattern that
    /// finds its ccbeacon.
    static func benchInHook(_ work: Workspace, _ hook: String, ready: String) throws -> (ChildProcess, String) {
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 3)
        let arguments = [
            Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.5",
            "--hook-timeout", "120", "--on-verified", hook,
        ]
        let bench = try ChildProcess(Tools.emulator, ["--bench", "--chips", "3", "--"] + arguments, in: work.url)
        let deadline = Date().addingTimeInterval(60)
        while !FileManager.default.fileExists(atPath: work.path(ready)), bench.isRunning, Date() < deadline {
            usleep(10_000)
        }
        return (bench, "^\(Tools.ccbeacon) provision \(list) ")
    }

    /// A host name that cannot name a bench (here 64 letters, one more than a bench name takes)
    /// leaves a file ledger's run without a bench, and the run says so (it said nothing); the hook
    /// runs it leaves pending are the next run's, whatever its bench (they waited for ever).
    @Test(.enabled(if: OtherNamespaces.canBeMade, "needs unshare (root)"))
    func aHostNameThatNamesNoBenchIsSaid() throws {
        let work = try Workspace()
        defer { work.remove() }
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 1)
        let host = String(repeating: "a", count: 64)
        let run = try ChildProcess.run(
            "/usr/bin/unshare",
            [
                "--uts", "/bin/sh", "-c", "hostname \(host) && exec \"$0\" \"$@\"", Tools.emulator, "--bench",
                "--chips", "1", "--", Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon", "--yes",
                "--wait", "0.5", "--on-verified", "exit 1",
            ], in: work.url, timeout: 120)
        #expect(run.status == 1, "\(run.errors)")
        #expect(
            run.errors.contains(
                "note: the host name '\(host.prefix(40))… (64 characters)' is not a bench name: 1–63 letters, digits, '.', '_' or '-', starting with a letter or digit; this run records no bench (give --bench NAME to name one)"
            ), "\(run.errors)")
        // A run without the hook says whose they are (they were "of this bench").
        let without = try ChildProcess.run(
            Tools.emulator,
            [
                "--bench", "--chips", "0", "--", Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon",
                "--yes", "--wait", "0.5", "--bench", "bench-2",
            ], in: work.url, timeout: 120)
        #expect(
            without.errors.contains(
                "note: 1 --on-verified hook run(s) recorded without a bench are pending; this run has no --on-verified"),
            "\(without.errors)")
        let next = try ChildProcess.run(
            Tools.emulator,
            [
                "--bench", "--chips", "0", "--", Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon",
                "--yes", "--wait", "0.5", "--bench", "bench-2", "--on-verified", "true",
            ], in: work.url, timeout: 120)
        #expect(next.status == 0, "\(next.errors)")
        #expect(
            next.errors.contains("hook on-verified for 'station-0'") && next.errors.contains("try 2): delivered"),
            "\(next.errors)")
    }

    /// A bench ended by `timeout` (SIGTERM to its process group, the emulator and ccbeacon alike)
    /// stops as a Ctrl-C does: the emulator outlives its command. It used to die at once, and the
    /// ccbeacon it left behind kept the ledger locked, then crashed when umockdev's preload lost
    /// its socket. A SIGTERM sent to the emulator alone is passed on.
    @Test(arguments: [true, false])
    func aBenchEndedByTimeoutStopsCleanly(wholeGroup: Bool) throws {
        let work = try Workspace()
        defer { work.remove() }
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 3)
        let bench = [
            Tools.emulator, "--chips", "1", "--", Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon",
            "--yes", "--wait", "60",
        ]
        let errors: String
        if wholeGroup {
            let run = try ChildProcess.run("/usr/bin/timeout", ["3"] + bench, in: work.url, timeout: 60)
            #expect(run.status == 124, "\(run.errors)")
            errors = run.errors
        } else {
            let emulator = try ChildProcess(bench[0], Array(bench.dropFirst()), in: work.url)
            #expect(emulator.waitUntil("waiting for a chip"), "\(emulator.errors)")
            kill(emulator.processID, SIGTERM)
            #expect(emulator.wait(timeout: 60) == 3, "the command's status: \(emulator.errors)")
            errors = emulator.errors
        }
        #expect(errors.contains("stopped with 2 stations of the list left"), "\(errors)")
        #expect(errors.contains("SIGTERM after the chip in progress"), "\(errors)")
        #expect(!errors.contains("crashed") && !errors.contains("libumockdev-preload"), "\(errors)")
        let again = try Tools.ccbeacon(
            Array(bench.dropFirst(5)), options: ["--bench", "--chips", "2", "--ieee", "00:12:4B:55:00:00"],
            in: work.url)
        #expect(again.status == 0, "nothing left holding the ledger: \(again.errors)")
    }

    /// Under `nohup` a closed terminal must not stop the run: a signal the parent ignores stays
    /// ignored (the handler used to replace it). SIGTERM still stops it cleanly.
    @Test func aSignalIgnoredByTheParentStaysIgnored() throws {
        let work = try Workspace()
        defer { work.remove() }
        let list = try ProvisioningThroughLibUSBTests.list(work, count: 200)
        let arguments = [Tools.ccbeacon, "provision", list, "--template", "cc2541-ibeacon", "--yes", "--wait", "0.5"]
        let bench = try ChildProcess(
            "/usr/bin/nohup", [Tools.emulator, "--bench", "--chips", "400", "--"] + arguments, in: work.url)
        #expect(bench.waitUntil("verified"), "\(bench.errors)")
        let pattern = "^\(Tools.ccbeacon) provision \(list) "
        _ = try ChildProcess.run("/usr/bin/pkill", ["-HUP", "-f", pattern], in: work.url)
        // Still burning after the signal: two more stations verified (a stop would have ended it
        // after the chip in hand).
        let before = bench.occurrences(of: "verified")
        #expect(bench.waitUntil("verified", appears: before + 2), "SIGHUP under nohup stopped the run: \(bench.output)")
        #expect(bench.isRunning, "SIGHUP under nohup stopped the run: \(bench.output)")
        _ = try ChildProcess.run("/usr/bin/pkill", ["-TERM", "-f", pattern], in: work.url)
        let status = bench.wait(timeout: 60)
        #expect(status == 3, "\(bench.output)\n\(bench.errors)")
        #expect(bench.output.contains("stopped: SIGTERM after the chip in progress"), "\(bench.output)")
    }
}
