import CCDebuggerEmulator
import Foundation
import TestSupport
import Testing

@testable import CCBeaconCLI

/// `plan` through the command line: the list it writes is provisioned as it is, and the ledger's
/// export carries the places' columns; what it cannot plan leaves no file.
struct PlanCommandTests {
    static let uuid = "7634A485-1732-4B7D-AB44-D505D8A24C60"

    @Test func aPlannedListIsProvisionedAndItsColumnsReachTheRegistry() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let places = try scratch.write("places.csv", "name,floor,x\nLift lobby,2,-12.5\n")
        let list = scratch.path("floor2.csv")
        let plan = ToolRun(["plan", places, "--uuid", Self.uuid, "--major", "2", "--first-minor", "7", "-o", list])
        #expect(plan.status == 0, "\(plan.diagnostics)")
        #expect(plan.output == "wrote \(list): 1 station, UUID \(Self.uuid) major 2, minor 7\n")
        #expect(
            try String(contentsOfFile: list, encoding: .utf8)
                == "name,uuid,major,minor,floor,x\nLift lobby,\(Self.uuid),2,7,2,-12.5\n")
        let ledger = scratch.path("l.sqlite")
        let provision = ToolRun(
            ["provision", list, "--template", "cc2541-ibeacon", "--ledger", ledger, "--yes", "--wait", "0.2"],
            debuggers: EmulatorProvider())
        #expect(provision.status == 0, "\(provision.diagnostics)")
        let csv = ToolRun(["ledger", "export", "--ledger", ledger])
        #expect(
            csv.output.hasPrefix(
                "name,uuid,major,minor,power,chip,debugger,at,address,readBack,heard,rssiCount,rssiMedian,powerSource,debugLocked,bench,run,floor,x\n"
            ))
        #expect(csv.output.hasSuffix(",2,-12.5\n"), "\(csv.output)")
        let json = ToolRun(["ledger", "export", "--ledger", ledger, "--format", "json"])
        #expect(json.output.contains(#""attributes": {"#) && json.output.contains(#""x": "-12.5""#))

        // Planned again against the ledger, with a place added: the first keeps minor 7.
        try Data("name,floor,x\nNew desk,2,1\nLift lobby,2,-12.5\n".utf8).write(to: URL(fileURLWithPath: places))
        let again = ToolRun(
            [
                "plan", places, "--uuid", Self.uuid, "--major", "2", "--first-minor", "7", "--ledger", ledger, "-o",
                scratch.path("grown.csv"),
            ])
        #expect(again.status == 0, "\(again.diagnostics)")
        #expect(
            try String(contentsOfFile: scratch.path("grown.csv"), encoding: .utf8)
                == "name,uuid,major,minor,floor,x\nNew desk,\(Self.uuid),2,8,2,1\nLift lobby,\(Self.uuid),2,7,2,-12.5\n"
        )
    }

    /// Lists that disagree with each other are planned from by none: a place already a station of
    /// one list kept its minor though another list gave that identity to another station (and of a
    /// station two lists number differently, the first list's minor was taken without a word).
    @Test(arguments: [
        (
            "name,uuid,major,minor\nOther,\(uuid),2,3\n",
            "'Other' in l2.csv has the identity of 'Kitchen' in l1.csv (UUID \(uuid) major 2 minor 3)"
        ),
        (
            "name,uuid,major,minor\nKitchen,\(uuid),2,7\n",
            "'Kitchen' is UUID \(uuid) major 2 minor 3 in l1.csv, but UUID \(uuid) major 2 minor 7 in l2.csv"
        ),
        // Names one list refuses as sharing file names were taken from two lists as two stations.
        (
            "name,uuid,major,minor\nKITCHEN,\(uuid),2,9\n",
            "'KITCHEN' in l2.csv differs only in case from 'Kitchen' in l1.csv (names are told apart without case in file names)"
        ),
    ])
    func listsThatDisagreeAreRefused(second: String, conflict: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("l1.csv", "name,uuid,major,minor\nKitchen,\(Self.uuid),2,3\n")
        _ = try scratch.write("l2.csv", second)
        _ = try scratch.write("places.csv", "name\nKitchen\nNew\n")
        let plan = {
            try ChildProcess.run(
                BuiltTools.ccbeacon,
                ["plan", "places.csv", "--uuid", Self.uuid, "--major", "2", "--list", "l1.csv,l2.csv", "-o", "o.csv"],
                in: scratch.url, timeout: 30)
        }
        let run = try plan()
        #expect(run.status == 65, "\(run.errors)")
        #expect(
            run.errors
                == "ccbeacon plan: error: the stations already given disagree in 1 place; nothing was planned:\n  \(conflict)\nhint: give each station one identity and each identity one station across --list and --ledger, then run again\n"
        )
        #expect(!FileManager.default.fileExists(atPath: scratch.path("o.csv")))
        // One source alone, or the same station in both, plans.
        _ = try scratch.write("l2.csv", "name,uuid,major,minor\nKitchen,\(Self.uuid),2,3\n")
        let agreeing = try plan()
        #expect(agreeing.status == 0, "\(agreeing.errors)")
    }

    /// The minors a plan gave, as runs: "minors 1…3" was said of 1 and 3.
    @Test(arguments: [
        ([UInt16(7)], "7"), ([1, 3], "1, 3"), ([2, 3, 4, 7], "2…4, 7"),
        ([1, 3, 5, 7, 9, 11, 12], "1, 3, 5, 7, 9 and 1 more run(s)"),
    ])
    func theMinorsAreSaidAsRuns(minors: [UInt16], said: String) {
        #expect(PlanCommand.runs(minors) == said)
    }

    /// A station list at `-o` is replaced only by the same list (the same plan run again): a plan
    /// of other places over it silently gave them new identities (B took A's minor, C took B's).
    /// Planned with it as `--list` into another file, the places keep theirs.
    @Test func aPlanReplacesAStationListOnlyWithTheSameList() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let plan = { (places: String, extra: [String]) throws -> ProcessResult in
            _ = try scratch.write("p.csv", places)
            return try ChildProcess.run(
                BuiltTools.ccbeacon, ["plan", "p.csv", "--uuid", Self.uuid, "--major", "2"] + extra, in: scratch.url,
                timeout: 30)
        }
        #expect(try plan("name\nA\nB\nC\n", ["-o", "s.csv"]).status == 0)
        let first = try scratch.bytes("s.csv")
        #expect(try plan("name\nA\nB\nC\n", ["-o", "s.csv"]).status == 0, "the same plan again")
        let other = try plan("name\nB\nC\nD\n", ["-o", "s.csv"])
        #expect(other.status == 1)
        #expect(
            other.errors
                == "ccbeacon plan: error: 's.csv' is a station list already, and this plan is not the same list; nothing was written\nhint: to keep its identities, plan with it as --list into another file (--list s.csv -o NEW.csv), then replace it; or name another file\n"
        )
        #expect(try scratch.bytes("s.csv") == first)
        #expect(try plan("name\nB\nC\nD\n", ["--list", "s.csv", "-o", "s2.csv"]).status == 0)
        #expect(
            try String(contentsOfFile: scratch.path("s2.csv"), encoding: .utf8)
                == "name,uuid,major,minor\nB,\(Self.uuid),2,2\nC,\(Self.uuid),2,3\nD,\(Self.uuid),2,4\n")
    }

    /// No other command's output replaces a station list: `ledger export -o list.csv` replaced the
    /// list with the registry (only verified stations, in columns a list refuses). A list with a
    /// wrong row is a list all the same (only lists that read whole were kept at first), and so is
    /// a file that cannot be read to tell.
    @Test(arguments: [
        ("l.csv", "name,uuid,major,minor\nKitchen,\(uuid),2,3\n"),
        ("l.csv", "\u{FEFF}Name,UUID,Major,Minor,power\r\nKitchen,\(uuid),2,3,\r\nRoof,\(uuid),1,80000,\r\n"),
        ("l.csv", "name,uuid,major,minor\n"),
        ("l.json", "[{\"name\": \"Kitchen\", \"uuid\": \"\(uuid)\", \"major\": 2, \"minor\": 3}]\n"),
        ("l.json", "[{\"name\": \"Kitchen\", \"uuid\": \"\(uuid)\", \"major\": 2, \"minor\": 70000}\n"),
        // As the reader reads it: after blank lines, with CR-only line ends; a station named Chip
        // (a registry's key, not a value) — each slipped through.
        ("l.csv", "\n  \nname,uuid,major,minor\nA,\(uuid),1,1\n"),
        ("l.csv", "name,uuid,major,minor\rA,\(uuid),1,1\r"),
        ("l.json", "[{\"name\":\"Chip\",\"uuid\":\"\(uuid)\",\"major\":1,\"minor\":1,\"note\":\"chip\"}]\n"),
    ])
    func noOutputReplacesAStationList(name: String, list: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write(name, list)
        for format in [["--format", "csv"], ["--format", "json"]] {
            let arguments = ["ledger", "export", "--ledger", "none.sqlite", "-o", name] + format
            let run = try ChildProcess.run(BuiltTools.ccbeacon, arguments, in: scratch.url, timeout: 30)
            #expect(run.status == 64, "\(run.errors)")
            #expect(
                run.errors.hasPrefix(
                    "ccbeacon ledger export: '\(name)' is a station list; no output replaces one, whose identities may be nowhere else: name another file\n"
                ), "\(run.errors)")
            #expect(try scratch.bytes(name) == Array(list.utf8))
        }
        // A plan replaces it only with the same list.
        _ = try scratch.write("p.csv", "name\nShed\n")
        let plan = try ChildProcess.run(
            BuiltTools.ccbeacon, ["plan", "p.csv", "--uuid", Self.uuid, "--major", "2", "-o", name], in: scratch.url,
            timeout: 30)
        #expect(plan.status == 1 && plan.errors.contains("is a station list already"), "\(plan.errors)")
        #expect(try scratch.bytes(name) == Array(list.utf8))
    }

    /// What is no station list is replaced as ever: a registry `ledger export` wrote (its own
    /// columns), an app's regions file, a file of notes.
    @Test(arguments: [
        "name,uuid,major,minor,power,chip,debugger\nKitchen,\(uuid),2,3,-59,00:12:4B:00:00:01,EMU\n",
        "[{\"name\": \"Kitchen\", \"uuid\": \"\(uuid)\", \"major\": 2, \"minor\": 3, \"chip\": \"00:12\"}]\n",
        "[{\"identifier\": \"site\", \"uuid\": \"\(uuid)\"}]\n", "my notes\n",
    ])
    func whatIsNoStationListIsReplaced(text: String) throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        _ = try scratch.write("out.txt", text)
        #expect(CommandSupport.stationListEvidence(at: scratch.path("out.txt")) == nil)
    }

    /// Refused, with nothing written: a site too large, an output over an input, a list option
    /// naming an empty file, a places file with an identity column.
    @Test func whatCannotBePlannedWritesNothing() throws {
        let scratch = try Scratch()
        defer { scratch.remove() }
        let places = try scratch.write("places.csv", "name\nA\nB\n")
        let out = scratch.path("out.csv")
        for (arguments, status, message) in [
            (["--first-minor", "65535"], 65, "2 places need minors; from 65535 on"),
            (
                ["-o", places], 64,
                "would overwrite the places '\(places)', an input of this run; choose another output"
            ),
            (["--list", "a.csv,,b.csv"], 64, "--list names an empty file name in 'a.csv,,b.csv'"),
        ] as [([String], Int32, String)] {
            let run = ToolRun(
                ["plan", places, "--uuid", Self.uuid, "--major", "1"] + (arguments.contains("-o") ? [] : ["-o", out])
                    + arguments)
            #expect(run.status == status, "\(arguments): \(run.diagnostics)")
            #expect(run.diagnostics.contains(message), "\(run.diagnostics)")
            #expect(!FileManager.default.fileExists(atPath: out))
        }
        #expect(try String(contentsOfFile: places, encoding: .utf8) == "name\nA\nB\n")
        let identity = try scratch.write("identity.csv", "name,major\nA,1\n")
        let refused = ToolRun(["plan", identity, "--uuid", Self.uuid, "--major", "1", "-o", out])
        #expect(refused.status == 65)
        #expect(
            refused.diagnostics.contains(
                "identity.csv:1:6: a 'major' column: the plan gives each place its UUID, major and minor"))
    }
}
