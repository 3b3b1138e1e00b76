import Foundation
import PackagePlugin

/// Makes `Version.swift` (`let packageVersion = "…"`) from the package's `VERSION` file, the one
/// place the version is written: `ccbeacon --version`, the man pages and `scripts/package` all read
/// it from there. A `VERSION` that is not one line holding a native Debian version — a digit, then
/// digits, letters, `.`, `+` and `~` (`1.0.0~rc1` for a release candidate, which sorts before
/// `1.0.0`), not ending in a separator, and no `-` (that would be a Debian revision) — fails the
/// build.
@main struct VersionFile: BuildToolPlugin {
    func createBuildCommands(context: PluginContext, target: Target) throws -> [Command] {
        let input = context.package.directoryURL.appending(path: "VERSION")
        let output = context.pluginWorkDirectoryURL.appending(path: "Version.swift")
        let script = #"""
            if [ "$(grep -c '' "$1")" -ne 1 ]; then echo "VERSION: one line, the version (e.g. 1.2.3)" >&2; exit 1; fi
            version=$(tr -d '\n' < "$1")
            case "$version" in
                ''|*[!0-9A-Za-z.~+]*|[!0-9]*|*[.~+])
                    echo "VERSION: '$version' is not a version (e.g. 1.2.3, or 1.2.3~rc1 before 1.2.3; no '-')" >&2
                    exit 1 ;;
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
