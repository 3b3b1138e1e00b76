#!/usr/bin/env bash
# The packages as a bench machine gets them: built from this checkout by scripts/package, checked
# by lintian (no errors), extracted into a temporary root (dpkg-deb -x) and run from there with no
# CCBEACON_DATA and no checkout around: --version, boards, templates, generate and verify from the
# packaged template, the man pages through man, the bash completion from its packaged place, and
# the packaged emulator under the packaged ccbeacon.
set -euo pipefail
cd "$(dirname "$0")/../.."
source scripts/lib.sh
need_apt_packages lintian dpkg-dev
checkout=$PWD
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
scripts/package "$work/dist" > "$work/debs" 2> "$work/build.log" || { cat "$work/build.log" >&2; exit 1; }
[ "$(wc -l < "$work/debs")" -eq 2 ] || { echo "scripts/package made $(wc -l < "$work/debs") packages, not 2" >&2; exit 1; }
fail() { echo "package test: $*" >&2; exit 1; }

lintian --tag-display-limit 0 $(cat "$work/debs") > "$work/lintian.txt" 2>&1 || true
if grep -q '^E: ' "$work/lintian.txt"; then cat "$work/lintian.txt" >&2; fail "lintian reports errors"; fi
for deb in $(cat "$work/debs"); do
    dpkg-deb -f "$deb" Depends | grep -q 'libc6' || fail "$deb: Depends lacks the C library"
    dpkg-deb -x "$deb" "$work/root"
done
dpkg-deb -f "$(grep '/ccbeacon_' "$work/debs")" Depends | grep -q 'libusb-1.0-0' || fail "Depends lacks libusb"

# Nothing of the checkout may be found: another folder, no data or template variables.
cd "$work"
run() { env -u CCBEACON_DATA -u CCBEACON_TEMPLATES "$work/root/usr/bin/ccbeacon" "$@"; }
[ "$(run --version)" = "ccbeacon $(tr -d '\n' < "$checkout/VERSION")" ] || fail "--version: $(run --version)"
run boards | grep -q '^hm10 ' || fail "boards does not list hm10"
run templates | grep -q "^cc2541-ibeacon .* bundled " || fail "templates: $(run templates)"
run generate --template cc2541-ibeacon --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 3 --minor 4 -o station.hex > /dev/null
run verify station.hex --uuid 7634A485-1732-4B7D-AB44-D505D8A24C60 --major 3 --minor 4 --template cc2541-ibeacon \
    | grep -q 'OK' || fail "verify of the packaged template's station failed"
[ -f "$work/root/usr/lib/udev/rules.d/70-ccbeacon.rules" ] || fail "no udev rule"
for page in ccbeacon ccbeacon-provision ccbeacon-ledger-show cc-debugger-emulator; do
    file="$work/root/usr/share/man/man1/$page.1.gz"
    [ -f "$file" ] || fail "no man page $page"
    warnings=$(MANWIDTH=80 man --warnings -l "$file" 2>&1 > /dev/null)
    [ -z "$warnings" ] || fail "man $page: $warnings"
done
bash -c "source '$work/root/usr/share/bash-completion/completions/ccbeacon'; COMP_WORDS=(ccbeacon provision --verify ''); COMP_CWORD=3; _ccbeacon; echo \"\${COMPREPLY[*]}\"" \
    | grep -qx 'crc read' || fail "the packaged bash completion"
"$work/root/usr/bin/cc-debugger-emulator" --help | grep -q -- '--save-chips DIR' || fail "emulator --help"
env -u CCBEACON_DATA "$work/root/usr/bin/cc-debugger-emulator" -- "$work/root/usr/bin/ccbeacon" devices \
    | grep -q 'EMU001' || fail "the packaged emulator under the packaged ccbeacon"
echo "packages: $(tr '\n' ' ' < "$work/debs" | sed "s|$work/dist/||g")built, lintian without errors$(grep -c '^W: ' "$work/lintian.txt" | sed 's/^/ (/; s/$/ warnings)/'), extracted and run outside the checkout"
