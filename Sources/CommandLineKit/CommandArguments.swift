/// What a command was asked, decoded from the parsed command line into a typed value before the
/// command opens a file, a ledger or a device: every value converted by its option's declaration,
/// then every combination checked. A command runs on its arguments only.
package protocol CommandArguments: Sendable {
    /// Converts the parsed command line's values (a usage error for a bad one).
    init(_ command: ParsedCommand) throws(CommandFailure)
    /// Checks how the options combine (a usage error for one that does not); runs after `init`,
    /// still before anything is opened.
    func validate() throws(CommandFailure)
}

extension CommandArguments {
    /// No combination to check.
    package func validate() throws(CommandFailure) {}
}

/// An option that may be left out, with the value it stands for then: declared once, so that the
/// help ("(default 16)"), the manual and the command read the same default.
package struct DefaultedOption<Value: Sendable>: Sendable {
    /// The table entry; its help ends with the default.
    package let spec: OptionSpec
    /// See `Option.convert`.
    package let convert: @Sendable (String) throws(CommandFailure) -> Value
    /// The value when the option is not given.
    package let defaultValue: Value

    /// An option of `spec` that `convert` converts, standing for `defaultValue` when not given.
    package init(
        spec: OptionSpec, convert: @escaping @Sendable (String) throws(CommandFailure) -> Value, defaultValue: Value
    ) {
        self.spec = spec
        self.convert = convert
        self.defaultValue = defaultValue
    }

    /// `option` standing for `value` (written `shown` in its help) when not given.
    package init(_ option: Option<Value>, default value: Value, shown: String) {
        var spec = option.spec
        spec.help += " (default \(shown))"
        spec.defaultValue = shown
        self.spec = spec
        convert = option.convert
        defaultValue = value
    }
}

extension DefaultedOption where Value: OptionChoice {
    /// A choice option (`Option(_:choosing:default:help:)`) standing for `defaultChoice` when not
    /// given; its help's list marks the default.
    package init(_ name: String, choosing choices: [Value], default defaultChoice: Value, help: String) {
        let option = Option(name, choosing: choices, default: defaultChoice, help: help)
        self.init(spec: option.spec, convert: option.convert, defaultValue: defaultChoice)
    }
}

extension Option {
    /// The same option, standing for `value` when not given (its help says so: "(default
    /// `shown`)").
    package func defaulting(to value: Value, shown: String) -> DefaultedOption<Value> {
        DefaultedOption(self, default: value, shown: shown)
    }
}

extension Option where Value: CustomStringConvertible {
    /// The same option, standing for `value` when not given, shown as it prints.
    package func defaulting(to value: Value) -> DefaultedOption<Value> {
        DefaultedOption(self, default: value, shown: value.description)
    }
}

extension ParsedCommand {
    /// The value of `option`, converted by its declaration; its default when not given.
    package func value<Value>(_ option: DefaultedOption<Value>) throws(CommandFailure) -> Value {
        guard let text = values[option.spec.name] else { return option.defaultValue }
        return try option.convert(text)
    }

    /// Whether `option` was given, whatever its value.
    package func isGiven<Value>(_ option: DefaultedOption<Value>) -> Bool { values[option.spec.name] != nil }
}
