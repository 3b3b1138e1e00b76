#!/usr/bin/env bash
# Tests of the import check (scripts/check-imports.swift), run by scripts/test:
#   scripts/tests/check-imports.sh PATH-TO-BUILT-check-imports
# 1. This package with one dependency line taken out of Package.swift must fail, naming the file.
# 2. A tiny package whose test imports an undeclared module (with an attribute and an access
#    level on the import) must fail; declared, it must pass.
set -euo pipefail
checker=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
repo=$(cd "$(dirname "$0")/../.." && pwd)
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
expect() { # expect STATUS PATTERN DIR: the checker's exit status and a line of its output
    local want=$1 pattern=$2 dir=$3 status=0 output
    output=$(cd "$dir" && swift package dump-package 2>/dev/null | "$checker" "$dir") || status=$?
    if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$output"; then
        echo "check-imports test failed in $dir: wanted exit $want and /$pattern/, got exit $status:" >&2
        echo "$output" >&2
        failed=1
    fi
}

# 1. The real package, ProvisioningTests' CCDebuggerEmulator dependency removed.
mkdir "$scratch/real"
ln -s "$repo/Sources" "$repo/Tests" "$scratch/real/"
sed 's/"TestSupport", "CCDebugger", "CCDebuggerEmulator",/"TestSupport", "CCDebugger",/' "$repo/Package.swift" \
    > "$scratch/real/Package.swift"
if cmp -s "$repo/Package.swift" "$scratch/real/Package.swift"; then
    echo "check-imports test: the dependency line to remove was not found in Package.swift" >&2
    exit 1
fi
expect 1 '^Tests/ProvisioningTests/[A-Za-z]+\.swift:[0-9]+: ProvisioningTests imports CCDebuggerEmulator' "$scratch/real"
expect 0 'every package import declared' "$repo"

# 2. A small package: Tool imports Core without declaring it.
small="$scratch/small"
mkdir -p "$small/Sources/Core" "$small/Sources/Tool"
echo 'public let answer = 42' > "$small/Sources/Core/Core.swift"
printf '%s\n' '// import Core (a comment is not an import)' '@_spi(Test) public import Core' 'print(answer)' \
    > "$small/Sources/Tool/main.swift"
write_package() {
    cat > "$small/Package.swift" <<SWIFT
// swift-tools-version:6.0
import PackageDescription
let package = Package(name: "small", targets: [
    .target(name: "Core"),
    .executableTarget(name: "Tool", dependencies: [$1]),
])
SWIFT
}
write_package ''
expect 1 '^Sources/Tool/main\.swift:2: Tool imports Core' "$small"
write_package '"Core"'
expect 0 '2 targets, every package import declared' "$small"

# 3. The README's module table: a row that leaves out a dependency, and a target with no row.
readme() { # readme DIR PATTERN TABLE...: the checker with the README holding the table lines
    local dir=$1 want=$2 pattern=$3 status=0 output
    shift 3
    printf '%s\n' '| module | what | depends on |' '|---|---|---|' "$@" > "$dir/README.md"
    output=$(cd "$dir" && swift package dump-package 2>/dev/null | "$checker" "$dir" README.md) || status=$?
    if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$output"; then
        echo "check-imports README test failed: wanted exit $want and /$pattern/, got exit $status:" >&2
        echo "$output" >&2
        failed=1
    fi
}
readme "$small" 0 'every package import declared' \
    '| `Sources/Core` | the answer | Swift standard library only |' '| `Sources/Tool` | prints it | Core |'
readme "$small" 1 'README.md:4: the row of Tool says ; Package.swift declares Core \(missing: Core\)' \
    '| `Sources/Core` | the answer | Swift standard library only |' '| `Sources/Tool` | prints it | Glibc |'
readme "$small" 1 'the module table has no row for Sources/Core' '| `Sources/Tool` | prints it | Core |'
readme "$small" 1 'README.md:3: no target Gone in Package.swift' '| `Sources/Gone` | was here | |' \
    '| `Sources/Core` | the answer | |' '| `Sources/Tool` | prints it | Core |'

[ "$failed" -eq 0 ] && echo "check-imports tests: passed"
exit "$failed"
