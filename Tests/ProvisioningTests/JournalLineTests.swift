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
