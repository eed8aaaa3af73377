# Shared helpers for ops/ scripts: a private PostgreSQL cluster run by an unprivileged user.
# Source it; do not run it.

OPS_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
PG_SUPERUSER="securepush"

log() { printf '\033[1m[securepush]\033[0m %s\n' "$*" >&2; }

# Finds PostgreSQL's server binaries, installing them from Debian's packages when missing.
pg_bindir() {
    local dir
    for dir in /usr/lib/postgresql/*/bin; do
        if [ -x "$dir/pg_ctl" ]; then echo "$dir"; return 0; fi
    done
    if command -v pg_ctl >/dev/null 2>&1; then dirname "$(command -v pg_ctl)"; return 0; fi
    return 1
}

# The services enabled now (unit names, sorted; nothing without systemctl).
_enabled_units() {
    command -v systemctl >/dev/null 2>&1 || return 0
    systemctl list-unit-files --state=enabled --no-legend 2>/dev/null | awk '{print $1}' | sort
}

# Installs Debian packages (as root) without leaving services running or enabled: the packages ops/ installs
# (PostgreSQL, nginx, HAProxy, Patroni, Prometheus) start a service of their own on a host with systemd, and the
# project runs its own instances. While installing, /usr/sbin/policy-rc.d (unless the host has one) answers 101
# ("not allowed") to every start; units the install enabled are disabled afterwards.
debian_install() {
    local policy=/usr/sbin/policy-rc.d created=0 code=0 before unit
    log "installing $* from Debian's packages (their services are neither started nor enabled)"
    before="$(_enabled_units)"
    if [ ! -e "$policy" ]; then
        printf '#!/bin/sh\nexit 101\n' >"$policy" && chmod 755 "$policy" && created=1
    fi
    { DEBIAN_FRONTEND=noninteractive apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "$@" >&2; } || code=$?
    if [ "$created" = 1 ]; then rm -f "$policy"; fi
    for unit in $(comm -13 <(printf '%s\n' "$before") <(_enabled_units)); do
        systemctl disable --now "$unit" >/dev/null 2>&1 || true
    done
    return "$code"
}

ensure_postgres() {
    if ! pg_bindir >/dev/null; then
        if [ "$(id -u)" -ne 0 ]; then
            log "PostgreSQL is not installed; install it (Debian: apt-get install postgresql postgresql-contrib) and retry"
            exit 1
        fi
        debian_install postgresql postgresql-contrib
    fi
    PG_BIN="$(pg_bindir)"
    export PG_BIN
}

# PostgreSQL refuses to run as root: when we are root, run it as an unprivileged system user.
pg_os_user() {
    if [ "$(id -u)" -ne 0 ]; then id -un; return; fi
    if id postgres >/dev/null 2>&1; then echo postgres; return; fi
    if ! id securepush >/dev/null 2>&1; then
        useradd --system --no-create-home --shell /usr/sbin/nologin securepush
    fi
    echo securepush
}

# Runs a command as USER (when we are root) from /, so that a working directory USER cannot enter (a clone in a
# mode-700 home directory) does not stop it; paths given to it must be absolute.
as_pg_user() {
    local user="$1"; shift
    if [ "$(id -u)" -eq 0 ]; then
        (cd / && runuser -u "$user" -- "$@")
    else
        "$@"
    fi
}

# Whether USER can enter every folder of PATH's existing part (PostgreSQL runs as USER and must reach its data).
pg_user_can_enter() { # USER PATH
    local user="$1" path="$2"
    while [ ! -e "$path" ]; do path="$(dirname "$path")"; done
    [ "$(id -u)" -ne 0 ] || [ "$user" = root ] || runuser -u "$user" -- test -x "$path"
}

# The private cluster's folder for ops/run: .data/postgres in the clone, or, when PostgreSQL's user cannot enter the
# clone (root's clone in a mode-700 home directory), a folder of this clone's own under /var/tmp that it can.
pg_data_home() {
    local inside="$OPS_ROOT/.data/postgres" user outside
    user="$(pg_os_user)"
    if pg_user_can_enter "$user" "$inside"; then echo "$inside"; return; fi
    outside="/var/tmp/securepush-$(printf '%s' "$OPS_ROOT" | sha256sum | cut -c1-12)/postgres"
    log "PostgreSQL runs as $user, who cannot enter $OPS_ROOT: its data goes to $outside (this clone's own; delete it with the clone)"
    mkdir -p "$outside"
    chmod 755 "$(dirname "$outside")"
    echo "$outside"
}

# psql_migrate URL VERSION: applies the migrations in sql/ numbered up to VERSION (999: all) to the database at URL
# with psql, each file in one transaction (ops tools that compare schemas; the server migrates with `securepush
# migrate`). Prints the name of the last one applied.
psql_migrate() {
    local url="$1" to="$2" migration last=""
    for migration in "$OPS_ROOT"/sql/[0-9][0-9][0-9]_*.sql; do
        [ "$((10#$(basename "$migration" | cut -c1-3)))" -le "$((10#$to))" ] || continue
        "$(pg_bindir)/psql" "$url" -v ON_ERROR_STOP=1 -qAtX -1 -f "$migration" >/dev/null
        last="$(basename "$migration")"
    done
    echo "$last"
}

free_port() {
    # Below the kernel's ephemeral range (ops/deploy.d/polling.py says why): one home for the rule.
    PYTHONPATH="$OPS_ROOT/ops/deploy.d" python3 -B -c 'from polling import free_port; print(free_port())'
}

# pg_start DATA_DIR PORT [extra postgres -c settings...]
# Initializes the cluster when new, starts it, creates the `securepush` database, exports DATABASE_URL.
pg_start() {
    local data_dir="$1" port="$2"; shift 2
    ensure_postgres
    local user; user="$(pg_os_user)"
    mkdir -p "$data_dir"
    local socket_dir="$data_dir/socket"
    if [ ! -f "$data_dir/db/PG_VERSION" ]; then
        log "initializing a private PostgreSQL cluster in $data_dir (run as user $user)"
        mkdir -p "$data_dir/db" "$socket_dir"
        chown -R "$user" "$data_dir" 2>/dev/null || true
        chmod 700 "$data_dir/db"
        as_pg_user "$user" "$PG_BIN/initdb" -D "$data_dir/db" -U "$PG_SUPERUSER" -A trust -E UTF8 --no-locale --no-sync >/dev/null
    fi
    mkdir -p "$socket_dir"
    chown "$user" "$data_dir" "$socket_dir" 2>/dev/null || true
    local options="-p $port -k $socket_dir -c listen_addresses=127.0.0.1 -c max_connections=300"
    local setting
    for setting in "$@"; do options="$options -c $setting"; done
    # A cluster already running in this folder is another run's (a second ops/run, say): never share it silently.
    if as_pg_user "$user" "$PG_BIN/pg_ctl" -D "$data_dir/db" status >/dev/null 2>&1; then
        log "a PostgreSQL is already running in $data_dir/db (another ops/run of this clone?): stop that one first (Ctrl-C in its terminal), or point this run at it with DATABASE_URL"
        return 1
    fi
    if ! as_pg_user "$user" "$PG_BIN/pg_ctl" -D "$data_dir/db" -l "$data_dir/postgres.log" -o "$options" -w -t 60 start >/dev/null; then
        log "PostgreSQL did not start on port $port; its log, $data_dir/postgres.log, ends:"
        tail -n 5 "$data_dir/postgres.log" >&2 || true
        return 1
    fi
    if ! "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U "$PG_SUPERUSER" -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = 'securepush'" | grep -q 1; then
        "$PG_BIN/createdb" -h 127.0.0.1 -p "$port" -U "$PG_SUPERUSER" securepush
    fi
    export PG_DATA_DIR="$data_dir" PG_PORT="$port" PG_USER="$user" PG_OPTIONS="$options"
    export DATABASE_URL="postgres://$PG_SUPERUSER@127.0.0.1:$port/securepush?sslmode=disable"
    log "PostgreSQL is up: $DATABASE_URL"
}

pg_stop() {
    local data_dir="${1:-$PG_DATA_DIR}"
    [ -n "$data_dir" ] && [ -f "$data_dir/db/postmaster.pid" ] || return 0
    as_pg_user "$(pg_os_user)" "$PG_BIN/pg_ctl" -D "$data_dir/db" -m fast -w stop >/dev/null || true
}

# The Android kit's compilation steps (ops/android-test, ops/android-jar, ops/kit-check): javac for Java 11 (the
# Android kit's level). android_javac OUT CLASSPATH DIR compiles DIR's sources with every lint as an error;
# android_stubs OUT compiles the stand-ins of the Android platform classes the kit uses (never packaged).
android_javac() { javac --release 11 -Xlint:all -Werror -cp "$2" -d "$1" $(find "$3" -name '*.java'); }
android_stubs() { javac --release 11 -d "$1" $(find "$OPS_ROOT/clients/android/stubs/src" -name '*.java'); }
