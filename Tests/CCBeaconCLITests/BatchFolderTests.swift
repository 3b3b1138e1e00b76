import CCDebuggerEmulator
import Checksums
import FirmwareTemplate
import Foundation
import IntelHex
import Storage
import Synchronization
import TestSupport
import Testing

@testable import CCBeaconCLI
@testable import CCDebugger
@testable import CommandLineKit

/// One batch writer per folder, and a folder whose `stations.json` always agrees with its files —
/// with two runs at once and after `kill -9` at any moment. These run the real binary.
@Suite(.serialized, .enabled(if: BuiltTools.ccbeaconAvailable, "needs the built ccbeacon"))
struct BatchFolderTests {
    /// A CSV list of `count` stations whose minors start at `first` (so two lists differ in every file).
    static func list(_ scratch: Scratch, _ name: String, count: Int, first: Int = 0) throws -> String {
        var text = "name,uuid,major,minor\n"
        for index in 0..<count { text += "s\(index),7634A485-1732-4B7D-AB44-D505D8A24C60,9,\(first + index)\n" }
        return try scratch.write(name, text)
    }

    static func batch(_ list: String, _ folder: String, _ extra: [String] = []) -> [String] {
        ["batch", list, "--template", "cc2541-ibeacon", "-o", folder] + extra
    }

    /// The exit status of a batch of `list` into `folder`, one job, killed at its `step`th durable
    /// step.
    static func killedBatch(_ scratch: Scratch, _ list: String, _ folder: String, atStep step: Int) throws -> Int32 {
        try ChildProcess.run(
            BuiltTools.ccbeacon, batch(list, folder, ["--jobs", "1"]), in: scratch.url,
            environment: CrashPoint.batchStep.armed(at: step), timeout: 60
        ).status
    }

    /// The promise: a `stations.json` in `folder`, if any, names only files that are there with
    /// exactly its sha256. Returns the problems (empty when it holds) and how many stations it lists.
    static func recordProblems(_ folder: String) throws -> (problems: [String], stations: Int) {
        let record = folder + "/stations.json"
        guard Files.isFile(record) else { return ([], 0) }
        let object = try JSONSerialization.jsonObject(with: Data(try Files.read(record))) as? [String: Any]
        let stations = object?["stations"] as? [[String: Any]] ?? []
        var problems: [String] = []
        for station in stations {
            guard let file = station["file"] as? String, let digest = station["sha256"] as? String else {
                problems.append("an entry without file or sha256")
                continue
            }
            guard let bytes = try? Files.read(folder + "/" + file) else {
                problems.append("\(file) is listed but missing")
                continue
            }
            if SHA256.hexDigest(bytes) != digest { problems.append("\(file) differs from its sha256") }
        }
        return (problems, stations.count)
    }

    /// A lock this process let go while a child it was starting still had a copy of the
    /// descriptor (posix_spawn's child has one until it execs) is taken once the child is gone —
    /// two runs one after the other in one process, with a test starting a program meanwhile,
    /// were refused as "another run". A lock this process still holds stays refused.
    @Test func aLockLetGoWhileAChildHasItsDescriptorIsTakenOnceTheChildIsGone() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.path("")
        let first = try FolderLock.acquire(folder, wait: false)
        let child = fork()
        if child == 0 {
            // Only async-signal-safe calls in the child of a threaded process. It lives on while
            // the parent lets go and takes the lock again: the point of the test is that moment.
            usleep(200_000)
            _exit(0)
        }
        #expect(child > 0)
        first.release()
        let second = try FolderLock.acquire(folder, wait: false)
        var status: Int32 = 0
        #expect(waitpid(child, &status, WNOHANG) == child || waitpid(child, &status, 0) == child)
        #expect(throws: FolderLock.Failure.held(directory: folder, holder: getpid())) {
            try FolderLock.acquire(folder, wait: false)
        }
        second.release()
    }

    /// A lock let go with its file removed (a batch refused whole leaves the folder as it found
    /// it) is never held twice: a process that was waiting on the removed file takes the lock on
    /// the file made next, so a third finds it held.
    @Test func aLockWhoseFileIsRemovedIsNeverHeldTwice() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.path("")
        let first = try FolderLock.acquire(folder, wait: false)
        #expect(first.createdFile)
        let waiting = DispatchSemaphore(value: 0)
        let taken = DispatchSemaphore(value: 0)
        let done = DispatchSemaphore(value: 0)
        let tookIt = Mutex(false)
        DispatchQueue.global().async {
            // Held here until the test is done with it.
            let lock = try? FolderLock.acquire(folder, wait: true) { _ in waiting.signal() }
            tookIt.withLock { $0 = lock != nil }
            taken.signal()
            done.wait()
            lock?.release()
        }
        #expect(waiting.wait(timeout: .now() + 30) == .success)
        first.releaseRemovingFile()
        #expect(taken.wait(timeout: .now() + 30) == .success)
        #expect(tookIt.withLock { $0 })
        #expect(Files.isFile(folder + "/" + FolderLock.fileName), "the lock is on a file the folder holds")
        #expect(throws: FolderLock.Failure.held(directory: folder, holder: getpid())) {
            try FolderLock.acquire(folder, wait: false)
        }
        done.signal()
    }

    @Test func aSecondBatchWaitsForTheFolderOrRefusesWithNoWait() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, "list.csv", count: 3)
        let folder = scratch.path("out")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        let held = try FolderLock.acquire(folder, wait: false)
        let refused = try ChildProcess.run(
            BuiltTools.ccbeacon, Self.batch(list, folder, ["--no-wait"]), in: scratch.url, timeout: 30)
        #expect(refused.status == 1)
        #expect(refused.errors.contains("another ccbeacon (process \(getpid())) is writing into"), "\(refused.errors)")
        #expect(try Files.list(folder) == [FolderLock.fileName], "nothing written")
        let waiting = try ChildProcess(BuiltTools.ccbeacon, Self.batch(list, folder), in: scratch.url)
        for _ in 0..<1000 where !waiting.errors.contains("waiting: another ccbeacon batch") { usleep(10_000) }
        #expect(waiting.errors.contains("waiting: another ccbeacon batch (process \(getpid()))"), "\(waiting.errors)")
        #expect(waiting.isRunning && !Files.isFile(folder + "/stations.json"), "it waits, writing nothing")
        held.release()
        #expect(waiting.wait(timeout: 30) == 0, "\(waiting.errors)")
        #expect(try Self.recordProblems(folder) == ([], 3))
    }

    /// Two batches of different lists into one folder at once: both succeed, one after the other,
    /// and the record agrees with the files (it used to list sha256s that 100 files did not have).
    @Test func twoBatchesAtOnceLeaveARecordThatAgreesWithTheFiles() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let first = try Self.list(scratch, "first.csv", count: 300)
        let second = try Self.list(scratch, "second.csv", count: 300, first: 1000)
        let folder = scratch.path("out")
        for _ in 0..<3 {
            let a = try ChildProcess(BuiltTools.ccbeacon, Self.batch(first, folder, ["--jobs", "1"]), in: scratch.url)
            let b = try ChildProcess(BuiltTools.ccbeacon, Self.batch(second, folder, ["--jobs", "1"]), in: scratch.url)
            #expect(a.wait(timeout: 120) == 0, "\(a.errors)")
            #expect(b.wait(timeout: 120) == 0, "\(b.errors)")
            #expect(try Self.recordProblems(folder) == ([], 300))
        }
    }

    /// `kill -9` at ten chosen moments (the Nth durable step: marker written and old record removed,
    /// each file renamed into place, record written, marker removed) and at ten moments in time: the folder never
    /// holds a record that disagrees with its files, and the next run says the last one was
    /// interrupted and ends with a true record.
    @Test func killedAtAnyMomentTheRecordNeverDisagreesWithTheFiles() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let lists = [
            try Self.list(scratch, "a.csv", count: 12), try Self.list(scratch, "b.csv", count: 12, first: 500),
        ]
        let folder = scratch.path("out")
        let complete = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(lists[0], folder), in: scratch.url)
        #expect(complete.status == 0)
        // Steps with 12 stations and one job: 1 marker, 2…13 files, 14 record, 15 marker removed.
        for (round, step) in [1, 2, 3, 7, 12, 13, 14, 15, 16, 5].enumerated() {
            let list = lists[(round + 1) % 2]
            let killed = try ChildProcess.run(
                BuiltTools.ccbeacon, Self.batch(list, folder, ["--jobs", "1"]), in: scratch.url,
                environment: CrashPoint.batchStep.armed(at: step), timeout: 60)
            #expect(killed.status == (step <= 15 ? 128 + SIGKILL : 0), "step \(step): \(killed.errors)")
            let (problems, _) = try Self.recordProblems(folder)
            #expect(problems.isEmpty, "after a kill at step \(step): \(problems)")
            let interrupted =
                Files.isFile(folder + "/.stations.json.incomplete") && !Files.isFile(folder + "/stations.json")
            #expect(interrupted == (step < 14), "step \(step): the record is set aside exactly while files change")
            // The next run tells, and mends.
            let next = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(list, folder), in: scratch.url, timeout: 60)
            #expect(next.status == 0, "\(next.errors)")
            #expect(next.errors.contains("was interrupted before it wrote its record") == interrupted, "step \(step)")
            #expect(try Self.recordProblems(folder) == ([], 12))
            #expect(!Files.exists(folder + "/.stations.json.incomplete"))
        }
        // Ten moments in time, with several jobs: whatever is hit, the promise holds.
        let big = try Self.list(scratch, "big.csv", count: 400, first: 2000)
        for round in 0..<10 {
            let list = round % 2 == 0 ? big : lists[0]
            let run = try ChildProcess(BuiltTools.ccbeacon, Self.batch(list, folder, ["--jobs", "2"]), in: scratch.url)
            usleep(UInt32(2_000 + round * 9_000))
            run.killGroup()
            run.wait()
            #expect(try Self.recordProblems(folder).problems.isEmpty, "after a kill at \(2 + round * 9) ms")
        }
        let final = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(big, folder), in: scratch.url, timeout: 60)
        #expect(final.status == 0)
        #expect(try Self.recordProblems(folder) == ([], 400))
        #expect(try Files.list(folder).filter { $0.contains(".ccbeacon-tmp.") }.isEmpty, "no temporary file left")
    }

    /// A batch never replaces a file no batch recorded: the user's own `stations.json` or a station
    /// file of other content refuses the run (exit 1), naming them, before anything is written.
    @Test func aFolderOfTheUsersOwnFilesIsRefusedWhole() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, "list.csv", count: 3)
        let folder = scratch.path("out")
        try Files.createDirectory(folder)
        _ = try scratch.write("out/stations.json", #"{"mine": true}"#)
        _ = try scratch.write("out/s1.hex", "precious")
        let run = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(list, folder), in: scratch.url, timeout: 30)
        #expect(run.status == 1)
        #expect(
            run.errors.contains(
                "error: \(folder)/ holds 2 files this batch would replace that no batch record vouches for (yours, or changed since a batch wrote them): stations.json, s1.hex"
            ),
            "\(run.errors)")
        #expect(run.errors.contains("hint: move them away, or choose another folder; nothing was written"))
        // Left as it was found: not even the batch's lock file stays (it did).
        #expect(try Files.list(folder).sorted() == ["s1.hex", "stations.json"])
        #expect(try scratch.bytes("out/stations.json") == Array(#"{"mine": true}"#.utf8))
        #expect(try scratch.bytes("out/s1.hex") == Array("precious".utf8))
        // Moved away, the folder takes the batch; a file of no station is named, and left alone.
        try FileManager.default.removeItem(atPath: folder + "/stations.json")
        try FileManager.default.moveItem(atPath: folder + "/s1.hex", toPath: folder + "/s1.hex.mine")
        let again = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(list, folder), in: scratch.url, timeout: 30)
        #expect(again.status == 0, "\(again.errors)")
        #expect(
            again.output.contains(
                "note: 1 file in \(folder)/ belongs to no station of this list and was left alone: s1.hex.mine\n"),
            "\(again.output)")
        #expect(try scratch.bytes("out/s1.hex.mine") == Array("precious".utf8))
    }

    /// A run killed after it wrote files its list added leaves them claimed by the folder's marker:
    /// the next run, of another list with those names, replaces them as its own.
    @Test func filesAKilledRunWroteStayTheBatchs() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.path("out")
        let first = try Self.list(scratch, "a.csv", count: 4)
        let longer = try Self.list(scratch, "b.csv", count: 8, first: 700)
        let changed = try Self.list(scratch, "c.csv", count: 8, first: 900)
        #expect(try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(first, folder), in: scratch.url).status == 0)
        // Steps with one job: 1 marker, 2…9 the files s0…s7: killed after s5, which a.csv lacks.
        #expect(try Self.killedBatch(scratch, longer, folder, atStep: 7) == 128 + SIGKILL)
        #expect(Files.isFile(folder + "/s5.hex") && !Files.isFile(folder + "/s6.hex"))
        let next = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(changed, folder), in: scratch.url, timeout: 60)
        #expect(next.status == 0, "\(next.errors)")
        #expect(next.output.contains("2 written, 6 replaced, 0 unchanged"), "\(next.output)")
        #expect(try Self.recordProblems(folder) == ([], 8))
    }

    /// A name a killed run only planned is not the batch's once a later run completes: a file the
    /// user puts there is refused by the run after, not replaced. And the files an earlier list
    /// left behind do not keep other writers off their names once they are gone.
    @Test func onlyWhatABatchWroteStaysItsOwn() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let folder = scratch.path("out")
        let short = try Self.list(scratch, "short.csv", count: 2)
        let long = try Self.list(scratch, "long.csv", count: 5, first: 100)
        #expect(try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(short, folder), in: scratch.url).status == 0)
        // Killed at its first durable step: its marker claims s0…s4, none of them written yet.
        #expect(try Self.killedBatch(scratch, long, folder, atStep: 1) == 128 + SIGKILL)
        _ = try scratch.write("out/s4.hex", "MINE")
        #expect(try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(short, folder), in: scratch.url).status == 0)
        let refused = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(long, folder), in: scratch.url)
        #expect(refused.status == 1 && refused.errors.contains(": s4.hex\n"), "\(refused.errors)")
        #expect(try scratch.bytes("out/s4.hex") == Array("MINE".utf8))
        // The long list's files, left behind by the short one, are gone: their names are free.
        try FileManager.default.removeItem(atPath: folder + "/s4.hex")
        #expect(try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(long, folder), in: scratch.url).status == 0)
        #expect(try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(short, folder), in: scratch.url).status == 0)
        try FileManager.default.removeItem(atPath: folder + "/s4.hex")
        let generate = ToolRun(
            [
                "generate", "--template", "cc2541-ibeacon", "--uuid", "7634A485-1732-4B7D-AB44-D505D8A24C60", "--major",
                "1", "--minor", "1", "-o",
                folder + "/s4.hex",
            ])
        #expect(generate.status == 0, "\(generate.diagnostics)")
    }

    /// Temporary files a killed writer left are removed (and listed) by the next run; a live
    /// writer's are left alone.
    @Test func leftoverTemporaryFilesAreRemovedAndListed() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let list = try Self.list(scratch, "list.csv", count: 2)
        let folder = scratch.path("out")
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        var dead: Int32 = 4_000_000
        while kill(dead, 0) == 0 || errno != ESRCH { dead -= 1 }
        let abandoned = Files.temporaryName(for: "s0.hex", inFolder: folder, process: dead)
        let live = Files.temporaryName(for: "s1.hex", inFolder: folder)
        _ = try scratch.write("out/" + abandoned, "half a file")
        _ = try scratch.write("out/" + live, "another writer's file")
        let run = try ChildProcess.run(BuiltTools.ccbeacon, Self.batch(list, folder), in: scratch.url, timeout: 30)
        #expect(run.status == 0)
        #expect(run.errors.contains("removed 1 temporary file an interrupted run left in"), "\(run.errors)")
        #expect(run.errors.contains(abandoned))
        #expect(!Files.exists(folder + "/" + abandoned) && Files.exists(folder + "/" + live))
    }
}
