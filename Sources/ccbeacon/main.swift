import CCBeaconCLI
import Foundation

// Unbuffered writes keep stdout and stderr in order when both go to one terminal.
let console = Console(
    output: { FileHandle.standardOutput.write(Data($0.utf8)) },
    diagnostics: { FileHandle.standardError.write(Data($0.utf8)) })
exit(CommandLineTool.run(Array(CommandLine.arguments.dropFirst()), console: console))
