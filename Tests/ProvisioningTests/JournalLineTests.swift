import Foundation
import Testing

@testable import StationLedger

/// A journal's lines are read as what a run could have written, and a line that is not one says
/// what is wrong with it in words.
struct JournalLineTests {
    static let good =
        #"{"version":1,"ledger":"L","bench":"b","attempt":3,"station":"s1","chip":"00:12:4B:00:00:01","outcome":"verified","reason":null,"readBack":null,"onAir":null}"#

    /// Writes `lines` as a journal; its entries, or the error reading them.
    static func read(_ lines: [String]) throws -> Result<[OutcomeJournal.Entry], LedgerError> {
        let path = NSTemporaryDirectory() + "journal-\(UUID().uuidString).jsonl"
        defer { unlink(path) }
        try Data(lines.map { $0 + "\n" }.joined().utf8).write(to: URL(fileURLWithPath: path))
        return Result { () throws(LedgerError) in try OutcomeJournal(path: path).entries() }
    }

    @Test func aLineARunWroteIsRead() throws {
        let entries = try Self.read([Self.good]).get()
        #expect(entries.map(\.outcome) == [.verified] && entries.first?.station == "s1")
    }

    /// A burn ends verified, failed or interrupted: a line saying 'in-progress' or 'superseded' is
    /// no outcome a run journals, and is never recorded as one.
    @Test(arguments: ["in-progress", "superseded"])
    func anOutcomeNoBurnEndsWithIsRefused(outcome: String) throws {
        let line = Self.good.replacingOccurrences(of: #""outcome":"verified""#, with: #""outcome":"\#(outcome)""#)
        guard case .failure(let error) = try Self.read([line]) else {
            Issue.record("a journal line with outcome \(outcome) was read as a burned outcome")
            return
        }
        #expect(error.message.contains("line 1 is not an outcome ccbeacon wrote"), "\(error)")
        #expect(error.message.contains("'\(outcome)' is not an outcome a burn ends with"), "\(error)")
    }

    /// A line that is not JSON at all says so, not what one JSON word would have been.
    @Test(arguments: ["nothing", "nul", "truth", "falsehood"])
    func aLineThatIsNotJSONSaysSo(line: String) throws {
        guard case .failure(let error) = try Self.read([Self.good, line]) else {
            Issue.record("read")
            return
        }
        #expect(error.message.contains("line 2 is not an outcome ccbeacon wrote"), "\(error)")
        #expect(!error.message.contains("expected null") && !error.message.contains("expected true"), "\(error)")
        #expect(error.message.contains("not a JSON value"), "\(error)")
    }
}

/// A symbolic link at the journal's name is refused, named as one (the ninth review: it was
/// taken for a journal an earlier ccbeacon kept beside a link to the list, with the hint `mv X X`).
@Test func aJournalThatIsASymbolicLinkIsRefusedAsOne() throws {
    let path = NSTemporaryDirectory() + "journal-\(UUID().uuidString).jsonl"
    defer { unlink(path) }
    try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: "elsewhere")
    #expect {
        try OutcomeJournal(path: path, runToken: String(repeating: "b", count: 32)).entries()
    } throws: { error in
        "\(error)".contains("it is a symbolic link; a bench's journal is its own file")
    }
}

/// A run's journal goes into the folder the run started in, and is named where that folder is.
struct JournalFolderTests {
    /// Renamed, the folder still takes the run's journal and the message names it there; a folder
    /// made at the old path gets nothing; deleted, the folder takes nothing and the journal is named
    /// by the path it had (a name inside a folder that is gone would lead nowhere).
    @Test func aRunsJournalFollowsItsFolder() throws {
        let base = NSTemporaryDirectory() + "journal-folder-\(UUID().uuidString)"
        defer { try? FileManager.default.removeItem(atPath: base) }
        try FileManager.default.createDirectory(atPath: base + "/bench", withIntermediateDirectories: true)
        let journal = OutcomeJournal(
            path: base + "/bench/ccbeacon-journal-b.jsonl", runToken: String(repeating: "a", count: 32))
        let entry = try #require(try JournalLineTests.read([JournalLineTests.good]).get().first)
        try FileManager.default.moveItem(atPath: base + "/bench", toPath: base + "/moved")
        try FileManager.default.createDirectory(atPath: base + "/bench", withIntermediateDirectories: false)
        #expect(journal.currentPath == base + "/moved/ccbeacon-journal-b.jsonl")
        try journal.append(entry)
        #expect(FileManager.default.fileExists(atPath: base + "/moved/ccbeacon-journal-b.jsonl"))
        #expect(!FileManager.default.fileExists(atPath: base + "/bench/ccbeacon-journal-b.jsonl"))
        #expect(try journal.entries() == [entry])
        try FileManager.default.removeItem(atPath: base + "/moved")
        #expect(journal.currentPath == journal.path)
        #expect(throws: LedgerError.self) { try journal.append(entry) }
        #expect(!FileManager.default.fileExists(atPath: base + "/bench/ccbeacon-journal-b.jsonl"))
    }
}
