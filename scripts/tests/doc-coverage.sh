#!/usr/bin/env bash
# Tests of the documentation coverage check (scripts/doc-coverage.swift), run by scripts/test:
#   scripts/tests/doc-coverage.sh PATH-TO-BUILT-doc-coverage
# A coverage file in which every symbol has an abstract passes (a compiler-made init(rawValue:)
# and a page that is no symbol are not counted); one undocumented symbol fails, naming it; an
# archive without a coverage file is an error (2), never a pass.
set -euo pipefail
checker=$1
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=0
entry() { # entry KIND NAME IS-SYMBOL HAS-ABSTRACT
    printf '{"referencePath":"doc://x/documentation/M/%s","kind":{"isSymbol":%s,"name":"%s"},"hasAbstract":%s}' \
        "$2" "$3" "$1" "$4"
}
expect() { # expect STATUS PATTERN ENTRIES...
    local want=$1 pattern=$2 status=0 output
    shift 2
    mkdir -p "$scratch/a.doccarchive"
    (IFS=,; echo "[$*]") > "$scratch/a.doccarchive/documentation-coverage.json"
    output=$("$checker" M "$scratch/a.doccarchive" 2>&1) || status=$?
    if [ "$status" -ne "$want" ] || ! grep -qE -- "$pattern" <<<"$output"; then
        echo "doc-coverage test failed: wanted exit $want and /$pattern/, got exit $status:" >&2
        echo "$output" >&2
        failed=1
    fi
}
expect 0 'M: 2 of 2 public symbols documented \(100 %\)' \
    "$(entry Structure S true true)" "$(entry Module M true true)" \
    "$(entry Initializer 'E/init(rawValue:)' true false)" "$(entry CollectionGroup 'S/Equatable' false false)"
expect 1 'undocumented: Instance Property M/S/count' \
    "$(entry Structure S true true)" "$(entry 'Instance Property' S/count true false)"
rm -rf "$scratch/a.doccarchive"
mkdir -p "$scratch/a.doccarchive"
status=0
"$checker" M "$scratch/a.doccarchive" > /dev/null 2>&1 || status=$?
if [ "$status" -ne 2 ]; then echo "doc-coverage test failed: no coverage file gave exit $status" >&2; failed=1; fi
[ "$failed" -eq 0 ] && echo "ok: doc-coverage passes full coverage, fails an undocumented symbol, refuses a missing file"
exit "$failed"
