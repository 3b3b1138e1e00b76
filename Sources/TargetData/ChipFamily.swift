/// The chips a debugger's target ID stands for: one family (the CC2541F128 and CC2541F256), which
/// shares one register map and so either reports its flash size or does not (`BoardCatalog.load`
/// refuses a `chips.json` where one target ID has two maps). What a command may know of a target
/// before it can tell the part — a debug-locked chip, a chip that reports no size — it knows
/// from here.
public struct ChipFamily: Sendable, Equatable {
    /// The debugger target ID (GET_STATE's first word).
    public let targetID: UInt16
    /// Its parts, in `chips.json`'s order; never empty.
    public let members: [Chip]

    /// The family of `targetID` among `chips`, or `nil` when none of them has that target ID.
    public init?(targetID: UInt16, in chips: [Chip]) {
        let members = chips.filter { $0.debuggerTargetID == targetID }
        guard !members.isEmpty else { return nil }
        self.targetID = targetID
        self.members = members
    }

    /// Its name (`CC2541`).
    public var name: String { members[0].family }
    /// Its register map.
    public var registerMap: RegisterMap { members[0].registerMap }
    /// Whether its chips tell their flash size (else the user gives it: `--flash-size`).
    public var reportsFlashSize: Bool { members[0].reportsFlashSize }
    /// The flash sizes it comes in, in bytes, in `chips.json`'s order.
    public var flashSizes: [Int] { members.map(\.flashSize) }
    /// Whether any of its parts has a place for `place` (an address): a part not yet told apart
    /// may.
    public func anyHas(_ place: KeyPath<Chip, Range<Int>?>) -> Bool { members.contains { $0[keyPath: place] != nil } }
}
