public import StructuredText

/// What is wrong in a template's `template.json`, and where (see `TargetData.DataFileError`, the
/// same type): the name under which a program that depends on the `FirmwareTemplate` product
/// catches it without depending on `TargetData` as well.
public typealias DataFileError = StructuredText.DataFileError
