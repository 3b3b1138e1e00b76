import Testing

@testable import CCBeaconCLI

/// The registry's tables are what the parser, `--help` and the usage lines read: these checks keep
/// each table whole, so that no option can be accepted yet missing from the usage, or named twice.
struct CommandTableTests {
    static let specs = CommandLineTool.commands

    @Test(arguments: specs.map(\.name))
    func everyOptionIsNamedOnceAndAppearsInTheUsage(name: String) throws {
        let spec = try #require(Self.specs.first { $0.name == name })
        let names = spec.options.map(\.name)
        #expect(Set(names).count == names.count, "\(name) declares an option twice: \(names)")
        let shorts = spec.options.compactMap(\.short)
        #expect(Set(shorts).count == shorts.count)
        let words = Set(spec.usage.split(whereSeparator: { " []()|\n".contains($0) }).map(String.init))
        for option in spec.options {
            #expect(words.contains(option.short ?? option.name), "\(name)'s usage lacks \(option.name): \(spec.usage)")
            #expect(!option.help.isEmpty, "\(name) \(option.name) has no help")
        }
        for group in spec.groups {
            for member in group.names { #expect(names.contains(member), "\(name)'s group names \(member)") }
        }
        for refused in spec.refusedOptions.keys { #expect(!names.contains(refused)) }
    }

    @Test func commandNamesAreUniqueAndDispatchToTheirOwnEntry() {
        let names = Self.specs.map(\.name)
        #expect(Set(names).count == names.count)
        #expect(CommandLineTool.registry.map(\.spec.name) == names)
    }

    /// What `help COMMAND` prints starts with the generated usage.
    @Test func helpShowsTheGeneratedUsage() {
        for spec in Self.specs {
            #expect(CommandLineTool.help(for: spec).contains("usage: \(spec.usage)\n"))
        }
    }
}
