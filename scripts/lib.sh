# Shared helpers for the scripts in this folder (sourced, not run).

# need_apt_packages PKG...: installs the Debian packages that are missing (as root, or with sudo).
need_apt_packages() {
    local missing=()
    for package in "$@"; do
        dpkg-query -W -f='${Status}' "$package" 2>/dev/null | grep -q "install ok installed" || missing+=("$package")
    done
    [ ${#missing[@]} -eq 0 ] && return 0
    local sudo=""
    [ "$(id -u)" -ne 0 ] && sudo="sudo"
    echo "installing Debian packages: ${missing[*]}" >&2
    $sudo apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
}

# need_swift: puts the Swift toolchain on PATH (it lives in /opt/swift on our machines).
need_swift() {
    command -v swift >/dev/null 2>&1 && return 0
    for dir in /opt/swift/usr/bin /usr/share/swift/usr/bin; do
        [ -x "$dir/swift" ] && export PATH="$dir:$PATH" && return 0
    done
    echo "error: the Swift toolchain (6.0 or newer) is not installed; see https://www.swift.org/install/linux/" >&2
    exit 1
}

# need_build_dependencies: the Debian packages the Swift build compiles and links against (libusb
# for the flasher; umockdev, glib via pkg-config for cc-debugger-emulator; SQLite for the ledger).
need_build_dependencies() {
    need_apt_packages libusb-1.0-0-dev libumockdev-dev umockdev pkg-config libsqlite3-dev
}
