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
# for the flasher; umockdev, glib via pkg-config for cc-debugger-emulator; SQLite and libpq for the
# ledgers; libqrencode for the labels' QR codes).
need_build_dependencies() {
    need_apt_packages libusb-1.0-0-dev libumockdev-dev umockdev pkg-config libsqlite3-dev libpq-dev libqrencode-dev
}

# start_test_postgres: a throwaway PostgreSQL server for the tests (Debian's postgresql): a cluster
# in a temporary folder, run as the unprivileged user postgres (PostgreSQL refuses root), reachable
# only through a Unix socket in that folder (no TCP). Exports CCBEACON_TEST_POSTGRES (a libpq URL of
# the server's maintenance database) and stops and removes it all when the calling shell exits,
# also when the tests fail.
start_test_postgres() {
    need_apt_packages postgresql
    local bin
    bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
    local run=()
    if [ "$(id -u)" -eq 0 ]; then run=(runuser -u postgres --); fi
    TEST_POSTGRES_DIR=$(mktemp -d /tmp/ccbeacon-postgres.XXXXXX)
    mkdir "$TEST_POSTGRES_DIR/data" "$TEST_POSTGRES_DIR/sock"
    chmod 755 "$TEST_POSTGRES_DIR"
    if [ "$(id -u)" -eq 0 ]; then chown postgres "$TEST_POSTGRES_DIR/data" "$TEST_POSTGRES_DIR/sock"; fi
    TEST_POSTGRES_STOP=("${run[@]}" "$bin/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -m immediate stop)
    trap 'stop_test_postgres' EXIT
    "${run[@]}" "$bin/initdb" -D "$TEST_POSTGRES_DIR/data" --auth=trust -U postgres >/dev/null
    "${run[@]}" "$bin/pg_ctl" -D "$TEST_POSTGRES_DIR/data" -o "-k $TEST_POSTGRES_DIR/sock -c listen_addresses=''" \
        -w -l "$TEST_POSTGRES_DIR/data/server.log" start >/dev/null
    export CCBEACON_TEST_POSTGRES="postgresql://postgres@/postgres?host=$TEST_POSTGRES_DIR/sock"
    export CCBEACON_TEST_POSTGRES_CTL="$bin/pg_ctl"
    export CCBEACON_TEST_POSTGRES_DATA="$TEST_POSTGRES_DIR/data"
}

stop_test_postgres() {
    [ -n "${TEST_POSTGRES_DIR:-}" ] || return 0
    "${TEST_POSTGRES_STOP[@]}" >/dev/null 2>&1 || true
    rm -rf "$TEST_POSTGRES_DIR"
    TEST_POSTGRES_DIR=""
}
