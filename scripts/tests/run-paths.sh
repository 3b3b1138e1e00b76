#!/usr/bin/env bash
# `scripts/run COMMAND ARGS…` runs the command in the caller's folder, so the paths it is given are
# the caller's: from a folder outside the checkout, `inspect ./x.hex` reads that folder's x.hex,
# `convert ... -o ./x.bin` writes there, and a path that exists only in the checkout is not found.
# Run it from anywhere: scripts/tests/run-paths.sh (exit 0 when all hold; it builds the release
# ccbeacon through scripts/run, as a user's first call would).
set -euo pipefail
repo=$(cd "$(dirname "$0")/../.." && pwd)
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
    echo "FAIL: $*" >&2
    exit 1
}

cp "$repo/firmware-templates/cc2541-ibeacon/image.hex" "$work/x.hex"
cd "$work"

out=$("$repo/scripts/run" inspect ./x.hex 2>"$work/err") || fail "inspect ./x.hex exited $?: $(cat "$work/err")"
[[ $out == "./x.hex: "* ]] || fail "inspect ./x.hex printed: $out"

"$repo/scripts/run" convert ./x.hex -o ./x.bin >/dev/null 2>"$work/err" || fail "convert exited $?: $(cat "$work/err")"
[ -s "$work/x.bin" ] || fail "convert did not write x.bin in the caller's folder"
[ ! -e "$repo/x.bin" ] || fail "convert wrote x.bin in the checkout"

# A path relative to the checkout means nothing in the caller's folder.
set +e
"$repo/scripts/run" inspect firmware-templates/cc2541-ibeacon/image.hex >/dev/null 2>"$work/err"
status=$?
set -e
[ "$status" -eq 1 ] || fail "a checkout-relative path was found from the caller's folder (exit $status)"
grep -q "no such file" "$work/err" || fail "unexpected message: $(cat "$work/err")"

echo "ok: scripts/run runs commands in the caller's folder"
