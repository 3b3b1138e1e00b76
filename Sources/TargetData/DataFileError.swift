public import StructuredText

/// What is wrong in a data file (`chips.json`, `boards.json`, a template's `template.json`), and
/// where: the file, the line and column (1-based; 0 when the file as a whole is meant), the JSON key
/// path, and a message that says what to do. Its `description` reads `file:line:column: key: message`.
///
/// The type lives in the package's internal text module; this name is how a program that depends on
/// the `TargetData` or `FirmwareTemplate` product catches it.
public typealias DataFileError = StructuredText.DataFileError
