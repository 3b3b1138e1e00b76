import Foundation
import PackagePlugin

/// Makes `Version.swift` (`let packageVersion = "…"`) from the package's `VERSION` file, the one
/// place the version is written: `ccbeacon --version`, the man pages and `scripts/package` all read
/// it from there. A `VERSION` that is not a version (digits and dots, an optional `-` suffix of
/// letters, digits, dots and `~`/`+`) fails the build.
@main struct VersionFile: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "VERSION")
        let output = context.pluginWorkDirectoryURL.appending(path: "Version.swift")
        let script = #"""
            version=$(tr -d '\n' < "$1")
            case "$version" in
                ''|*[!0-9A-Za-z.~+-]*|[!0-9]*) echo "VERSION: '$version' is not a version (e.g. 1.2.3)" >&2; exit 1 ;;
            esac
            printf '/// The version of this build, from the package'"'"'s VERSION file.\nlet packageVersion = "%s"\n' "$version" > "$2"
            """#
        return [
            .buildCommand(
                displayName: "Version.swift from VERSION", executable: URL(filePath: "/bin/sh"),
                arguments: ["-c", script, "sh", input.path, output.path], inputFiles: [input], outputFiles: [output])
        ]
    }
}
