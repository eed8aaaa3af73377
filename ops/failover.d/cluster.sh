#!/usr/bin/env bash
# A real 3-node Patroni PostgreSQL HA cluster on loopback, with HAProxy in front, and the faults the failover
# matrix injects into it. Debian's packages: PostgreSQL 15, patroni 3.0.2 with its built-in Raft store
# (python3-pysyncobj, no etcd), haproxy; nftables and iproute2 for the dropped-traffic fault. Installed when
# missing. Needs root (node users, nftables, apt).
#
# Source it (functions below), or run it with a subcommand: `ops/failover.d/cluster.sh start DIR`, `... leader DIR`.
#   cluster_start DIR                     writes DIR/node{1,2,3}/patroni.yml and DIR/haproxy.cfg, starts everything,
#                                         waits until healthy, creates the application role and database; prints and
#                                         exports CLUSTER_URL (multi-host) and CLUSTER_HAPROXY_URL (also in DIR/cluster.env)
#   cluster_wait_healthy DIR TIMEOUT      a leader, a streaming synchronous standby and all 3 members running
#   cluster_leader DIR                    prints "NAME PG_PORT POSTMASTER_PID" of the current leader
#   cluster_wait_writable DIR TIMEOUT [NOT_PORT] [SINCE_EPOCH]
#                                         write loop on CLUSTER_URL with target_session_attrs=read-write until a node
#                                         (other than NOT_PORT) is not in recovery and commits an INSERT; prints
#                                         "SECONDS PORT" (seconds since SINCE_EPOCH, default: the call)
#   cluster_switchover DIR                patronictl switchover --force to a synchronous standby
#   cluster_kill_primary DIR              kill -9 of the leader's postmaster
#   cluster_freeze_primary DIR SECONDS    SIGSTOP of the leader's postmaster and its children, SECONDS, SIGCONT
#   cluster_drop_primary DIR SECONDS      the leader's node isolated for SECONDS by nftables: no RST, sockets go half-open
#   cluster_stop DIR                      stops everything (bounded), kills leftovers; DIR (logs) is kept
# The fault functions print the old leader's "NAME PG_PORT POSTMASTER_PID" before they act.
#
# Layout: node i (1..3) listens on 127.0.0.1: PostgreSQL 5440+i, Patroni REST 8010+i, Raft 2220+i; HAProxy on 5440
# (the primary). When one of these ports is taken, the whole block moves by 100 (CLUSTER_PORT_OFFSET forces it).
# Node i runs as its own system user securepush-ha<i> (created when missing): nftables matches a node's packets by
# that uid (meta skuid), which is how cluster_drop_primary isolates one node on a shared loopback.

CLUSTER_LIB_DIR="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
# shellcheck source=../lib.sh
source "$CLUSTER_LIB_DIR/../lib.sh"

CLUSTER_PY=/usr/bin/python3   # Debian's: patroni and pysyncobj live there (a pyenv python3 may shadow it)
CLUSTER_SCOPE=securepush-ha
CLUSTER_APP_USER=securepush
CLUSTER_APP_DB=securepush

_cl_now() { date +%s.%N; }
_cl_children() { pgrep -P "$1" 2>/dev/null | tr '\n' ' ' || true; }
_cl_since() { awk -v a="$1" -v b="$(_cl_now)" 'BEGIN { printf "%.1f", b - a }'; }

# Installs what the cluster needs from Debian's packages when missing (as ensure_postgres does for PostgreSQL).
cluster_install() {
    if [ "$(id -u)" -ne 0 ]; then log "the HA cluster needs root (node users, nftables)"; return 1; fi
    ensure_postgres
    if ! command -v patroni >/dev/null || ! command -v haproxy >/dev/null || ! command -v nft >/dev/null ||
        ! command -v ip >/dev/null || ! "$CLUSTER_PY" -c 'import pysyncobj' 2>/dev/null; then
        debian_install patroni python3-pysyncobj haproxy nftables iproute2
    fi
    if ! "$PG_BIN/postgres" --version | grep -q ' 15\.'; then log "note: PostgreSQL is not 15 ($PG_BIN)"; fi
}

_cl_load() {
    local dir="$1"
    [ -f "$dir/cluster.env" ] || { log "no cluster in $dir (missing cluster.env)"; return 1; }
    # shellcheck disable=SC1091
    source "$dir/cluster.env"
    if [ -z "${PG_BIN:-}" ]; then PG_BIN="$(pg_bindir)" || { log "PostgreSQL is not installed"; return 1; }; fi
}
_cl_pg_port() { echo $((5440 + $1 + CLUSTER_PORT_OFFSET)); }
_cl_rest_port() { echo $((8010 + $1 + CLUSTER_PORT_OFFSET)); }
_cl_raft_port() { echo $((2220 + $1 + CLUSTER_PORT_OFFSET)); }
_cl_node_user() { echo "securepush-ha$1"; }

_cl_ports_free() {
    local offset="$1"
    "$CLUSTER_PY" - "$offset" <<'PY'
import socket, sys
off = int(sys.argv[1])
for port in [5440 + off] + [b + i + off for b in (5440, 8010, 2220) for i in (1, 2, 3)]:
    s = socket.socket()
    s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)  # as the servers do: TIME_WAIT is no conflict
    try:
        s.bind(("127.0.0.1", port))
        s.listen()
    except OSError:
        sys.exit(1)
    finally:
        s.close()
PY
}

# Prints one line per member from the first node's REST API that answers /cluster:
# "NAME ROLE STATE PG_PORT LAG" (role: leader, sync_standby, replica; LAG in bytes, "unknown" or "-").
_cl_members() {
    local dir="$1"
    _cl_load "$dir" || return 1
    "$CLUSTER_PY" - "$(_cl_rest_port 1)" "$(_cl_rest_port 2)" "$(_cl_rest_port 3)" <<'PY'
import json, sys, urllib.request
for port in sys.argv[1:]:
    try:
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/cluster", timeout=1) as r:
            members = json.load(r)["members"]
    except Exception:
        continue
    for m in members:
        lag = m.get("lag", "-")
        print(m["name"], m["role"], m["state"], m.get("port", "-"), lag if lag != "" else "-")
    sys.exit(0)
sys.exit(1)
PY
}

_cl_psql_super() { # DIR PORT SQL...
    local dir="$1" port="$2"; shift 2
    PGPASSWORD="$CLUSTER_SUPER_PASSWORD" PGCONNECT_TIMEOUT=2 timeout -k 1 10 \
        "$PG_BIN/psql" -h 127.0.0.1 -p "$port" -U postgres -d postgres -qAtX -v ON_ERROR_STOP=1 "$@"
}

cluster_wait_healthy() {
    local dir="$1" timeout="${2:-120}" start members leader line
    _cl_load "$dir" || return 1
    start="$(_cl_now)"
    while :; do
        members="$(_cl_members "$dir" 2>/dev/null || true)"
        leader="$(awk '$2 == "leader" && $3 == "running" { print $4 }' <<<"$members")"
        if [ -n "$leader" ] && [ "$(awk '$3 == "running" || $3 == "streaming"' <<<"$members" | wc -l)" -eq 3 ] &&
            grep -q ' sync_standby \(running\|streaming\) ' <<<"$members"; then
            # Patroni's view agrees with the primary's own: both standbys stream, one of them synchronously.
            line="$(_cl_psql_super "$dir" "$leader" -c "SELECT count(*) FILTER (WHERE state = 'streaming') = 2 AND count(*) FILTER (WHERE state = 'streaming' AND sync_state = 'sync') = 1 FROM pg_stat_replication" 2>/dev/null || true)"
            if [ "$line" = t ]; then
                log "cluster healthy after $(_cl_since "$start") s: $(tr '\n' ';' <<<"$members")"
                return 0
            fi
        fi
        if awk -v a="$start" -v t="$timeout" -v b="$(_cl_now)" 'BEGIN { exit !(b - a > t) }'; then
            log "cluster not healthy after $timeout s; members: $(tr '\n' ';' <<<"$members")"
            return 1
        fi
        sleep 0.5
    done
}

cluster_leader() {
    local dir="$1" name port pid
    _cl_load "$dir" || return 1
    read -r name port < <(_cl_members "$dir" | awk '$2 == "leader" { print $1, $4; exit }') || true
    if [ -z "${name:-}" ]; then log "no leader"; return 1; fi
    pid="$(head -1 "$dir/$name/data/postmaster.pid" 2>/dev/null || echo -)"
    echo "$name $port $pid"
}

_cl_write_patroni_yml() { # DIR I
    local dir="$1" i="$2" node="node$2" j partners=""
    for j in 1 2 3; do
        [ "$j" = "$i" ] || partners="$partners${partners:+, }127.0.0.1:$(_cl_raft_port "$j")"
    done
    cat >"$dir/$node/patroni.yml" <<YAML
scope: $CLUSTER_SCOPE
namespace: /securepush/
name: $node
log:
  level: INFO
restapi:
  listen: 127.0.0.1:$(_cl_rest_port "$i")
  connect_address: 127.0.0.1:$(_cl_rest_port "$i")
raft:
  data_dir: $dir/$node/raft
  self_addr: 127.0.0.1:$(_cl_raft_port "$i")
  partner_addrs: [$partners]
bootstrap:
  dcs:
    ttl: 20
    loop_wait: 2
    retry_timeout: 5
    primary_start_timeout: 0
    synchronous_mode: true
    postgresql:
      use_pg_rewind: true
      use_slots: true
      parameters:
        max_connections: 100
        max_wal_senders: 10
        max_replication_slots: 10
        wal_level: replica
        hot_standby: 'on'
        wal_log_hints: 'on'
        wal_keep_size: 128MB
        fsync: 'off'
        shared_buffers: 64MB
        # Commit timestamps, for the commit-to-push latency bench (securepush-bench latency) on this cluster.
        track_commit_timestamp: 'on'
  initdb:
  - encoding: UTF8
  - no-locale
postgresql:
  listen: 127.0.0.1:$(_cl_pg_port "$i")
  connect_address: 127.0.0.1:$(_cl_pg_port "$i")
  data_dir: $dir/$node/data
  bin_dir: $PG_BIN
  pgpass: $dir/$node/pgpass
  use_unix_socket: true
  authentication:
    superuser:
      username: postgres
      password: $CLUSTER_SUPER_PASSWORD
    replication:
      username: replicator
      password: $CLUSTER_REPL_PASSWORD
    rewind:
      username: postgres
      password: $CLUSTER_SUPER_PASSWORD
  parameters:
    unix_socket_directories: $dir/$node/socket
    password_encryption: scram-sha-256
  pg_hba:
  - local all all trust
  - host replication replicator 127.0.0.1/32 scram-sha-256
  - host all all 127.0.0.1/32 scram-sha-256
YAML
}

_cl_write_haproxy_cfg() {
    local dir="$1" i
    {
        cat <<CFG
global
    maxconn 500
    stats socket $dir/haproxy.sock mode 600 level admin
defaults
    mode tcp
    timeout connect 2s
    timeout client 30m
    timeout server 30m
    timeout check 1s
listen primary
    bind 127.0.0.1:$((5440 + CLUSTER_PORT_OFFSET))
    option httpchk OPTIONS /primary
    http-check expect status 200
    default-server inter 1s fall 2 rise 1 on-marked-down shutdown-sessions
CFG
        for i in 1 2 3; do
            echo "    server node$i 127.0.0.1:$(_cl_pg_port "$i") check port $(_cl_rest_port "$i")"
        done
    } >"$dir/haproxy.cfg"
}

# Starts a command in its own session in the background; its pid (the command's own, through exec) goes to PIDFILE.
# It starts in the folder of its log (the cluster's own, under /tmp): a node runs as a user of its own, who may not
# be able to enter the caller's working directory (a clone in a mode-700 home), and PostgreSQL then never starts.
_cl_spawn() { # PIDFILE LOGFILE COMMAND...
    local pidfile="$1" logfile="$2"; shift 2
    (cd "$(dirname "$logfile")" && setsid bash -c 'echo $$ >"$1"; shift; exec "$@"' _ "$pidfile" "$@" >"$logfile" 2>&1 </dev/null &)
    local deadline=$((SECONDS + 5))
    while [ ! -s "$pidfile" ] && [ $SECONDS -lt $deadline ]; do sleep 0.05; done
}

cluster_start() {
    local dir="$1" i node user offset tries=0 start
    start="$(_cl_now)"
    cluster_install || return 1
    mkdir -p "$dir"
    dir="$(cd "$dir" && pwd)"
    chmod 755 "$dir"
    if [ -f "$dir/cluster.env" ]; then log "$dir already holds a cluster (cluster.env); use an empty folder"; return 1; fi

    offset="${CLUSTER_PORT_OFFSET:-}"
    if [ -z "$offset" ]; then
        offset=0
        until _cl_ports_free "$offset"; do
            tries=$((tries + 1)); offset=$((tries * 100))
            if [ $tries -ge 20 ]; then log "no free port block found"; return 1; fi
        done
    elif ! _cl_ports_free "$offset"; then
        log "ports at CLUSTER_PORT_OFFSET=$offset are taken"; return 1
    fi
    CLUSTER_PORT_OFFSET="$offset"
    CLUSTER_SUPER_PASSWORD="$("$CLUSTER_PY" -c 'import secrets; print(secrets.token_hex(16))')"
    CLUSTER_REPL_PASSWORD="$("$CLUSTER_PY" -c 'import secrets; print(secrets.token_hex(16))')"
    CLUSTER_APP_PASSWORD="$("$CLUSTER_PY" -c 'import secrets; print(secrets.token_hex(16))')"
    CLUSTER_URL="postgres://$CLUSTER_APP_USER:$CLUSTER_APP_PASSWORD@127.0.0.1:$(_cl_pg_port 1),127.0.0.1:$(_cl_pg_port 2),127.0.0.1:$(_cl_pg_port 3)/$CLUSTER_APP_DB"
    CLUSTER_HAPROXY_URL="postgres://$CLUSTER_APP_USER:$CLUSTER_APP_PASSWORD@127.0.0.1:$((5440 + offset))/$CLUSTER_APP_DB"
    (
        umask 077
        cat >"$dir/cluster.env" <<ENV
CLUSTER_PORT_OFFSET=$offset
CLUSTER_SUPER_PASSWORD=$CLUSTER_SUPER_PASSWORD
CLUSTER_REPL_PASSWORD=$CLUSTER_REPL_PASSWORD
CLUSTER_APP_PASSWORD=$CLUSTER_APP_PASSWORD
CLUSTER_URL=$CLUSTER_URL
CLUSTER_HAPROXY_URL=$CLUSTER_HAPROXY_URL
ENV
    )

    for i in 1 2 3; do
        node="node$i"; user="$(_cl_node_user "$i")"
        if ! id "$user" >/dev/null 2>&1; then
            useradd --system --no-create-home --user-group --shell /usr/sbin/nologin "$user"
        fi
        mkdir -p "$dir/$node/raft" "$dir/$node/socket"
        _cl_write_patroni_yml "$dir" "$i"
        chown -R "$user:" "$dir/$node"
        chmod 700 "$dir/$node"
    done
    _cl_write_haproxy_cfg "$dir"

    log "starting 3 Patroni nodes (PostgreSQL on 127.0.0.1:$(_cl_pg_port 1)-$(_cl_pg_port 3), REST $(_cl_rest_port 1)-$(_cl_rest_port 3), Raft $(_cl_raft_port 1)-$(_cl_raft_port 3)) in $dir"
    for i in 1 2 3; do
        node="node$i"; user="$(_cl_node_user "$i")"
        _cl_spawn "$dir/$node.pid" "$dir/$node/patroni.log" \
            env HOME="$dir/$node" setpriv --reuid="$user" --regid="$user" --init-groups -- patroni "$dir/$node/patroni.yml"
    done
    _cl_spawn "$dir/haproxy.pid" "$dir/haproxy.log" haproxy -db -f "$dir/haproxy.cfg"

    if ! cluster_wait_healthy "$dir" "${CLUSTER_START_TIMEOUT:-180}"; then
        log "cluster did not come up; logs in $dir/node*/patroni.log"
        return 1
    fi
    local leader_port
    leader_port="$(cluster_leader "$dir" | awk '{ print $2 }')"
    if [ "$(_cl_psql_super "$dir" "$leader_port" -c "SELECT count(*) FROM pg_available_extensions WHERE name = 'pgcrypto'")" != 1 ]; then
        log "pgcrypto is not available (Debian: postgresql-contrib)"; return 1
    fi
    # Superuser: the application's migrations create extensions (pgcrypto).
    _cl_psql_super "$dir" "$leader_port" -c "CREATE ROLE $CLUSTER_APP_USER LOGIN SUPERUSER PASSWORD '$CLUSTER_APP_PASSWORD'" >/dev/null
    _cl_psql_super "$dir" "$leader_port" -c "CREATE DATABASE $CLUSTER_APP_DB OWNER $CLUSTER_APP_USER" >/dev/null
    _cl_psql_super "$dir" "$leader_port" -d "$CLUSTER_APP_DB" \
        -c "CREATE TABLE failover_probe (id bigserial PRIMARY KEY, at timestamptz NOT NULL DEFAULT now(), port int NOT NULL)" >/dev/null
    # HAProxy reaches the primary (its checks run every second).
    local deadline=$((SECONDS + 15))
    until PGCONNECT_TIMEOUT=2 timeout 5 "$PG_BIN/psql" "$CLUSTER_HAPROXY_URL" -qAtXc 'SELECT 1' >/dev/null 2>&1; do
        if [ $SECONDS -ge $deadline ]; then log "HAProxy does not reach the primary"; return 1; fi
        sleep 0.5
    done
    export CLUSTER_URL CLUSTER_HAPROXY_URL
    log "cluster up in $(_cl_since "$start") s"
    echo "CLUSTER_URL=$CLUSTER_URL"
    echo "CLUSTER_HAPROXY_URL=$CLUSTER_HAPROXY_URL"
}

cluster_wait_writable() {
    local dir="$1" timeout="$2" not_port="${3:-}" since="${4:-}" start out url
    _cl_load "$dir" || return 1
    start="$(_cl_now)"; since="${since:-$start}"
    url="$CLUSTER_URL?target_session_attrs=read-write&connect_timeout=2&application_name=failover_probe"
    while :; do
        # One attempt is bounded: connect_timeout per host, and timeout for a query on a frozen or cut-off node
        # (or a commit waiting for a synchronous standby that is gone).
        out="$(timeout -k 1 8 "$PG_BIN/psql" "$url" -qAtX -v ON_ERROR_STOP=1 \
            -c "SELECT NOT pg_is_in_recovery()" \
            -c "INSERT INTO failover_probe (port) VALUES (inet_server_port()) RETURNING port" 2>/dev/null | tr '\n' ' ' || true)"
        # shellcheck disable=SC2086
        set -- $out
        if [ "${1:-}" = t ] && [ -n "${2:-}" ] && [ "$2" != "$not_port" ]; then
            echo "$(_cl_since "$since") $2"
            return 0
        fi
        if awk -v a="$start" -v t="$timeout" -v b="$(_cl_now)" 'BEGIN { exit !(b - a > t) }'; then
            log "no write accepted within $timeout s${not_port:+ by a node other than :$not_port}"
            return 1
        fi
        sleep 0.2
    done
}

cluster_switchover() {
    local dir="$1" leader candidate
    _cl_load "$dir" || return 1
    leader="$(cluster_leader "$dir")" || return 1
    candidate="$(_cl_members "$dir" | awk '$2 == "sync_standby" { print $1; exit }' || true)"
    if [ -z "$candidate" ]; then log "no synchronous standby to switch over to"; return 1; fi
    echo "$leader"
    log "switchover ${leader%% *} -> $candidate"
    timeout -k 5 60 patronictl -c "$dir/node1/patroni.yml" switchover --leader "${leader%% *}" --candidate "$candidate" --force >&2
}

cluster_kill_primary() {
    local dir="$1" leader name port pid
    leader="$(cluster_leader "$dir")" || return 1
    read -r name port pid <<<"$leader"
    echo "$leader"
    log "kill -9 of $name's postmaster (pid $pid)"
    kill -KILL "$pid"
}

cluster_freeze_primary() {
    local dir="$1" seconds="$2" leader name port pid pids
    leader="$(cluster_leader "$dir")" || return 1
    read -r name port pid <<<"$leader"
    echo "$leader"
    # The postmaster first, so that it forks no new child after the list is taken.
    kill -STOP "$pid"
    pids="$pid $(_cl_children "$pid")"
    # shellcheck disable=SC2086
    kill -STOP $pids 2>/dev/null || true
    echo "$pids" >"$dir/frozen.pids"   # cluster_stop resumes them if we are interrupted
    log "froze $name's postmaster and $(($(wc -w <<<"$pids") - 1)) children for $seconds s"
    sleep "$seconds"
    # shellcheck disable=SC2086
    kill -CONT $pids 2>/dev/null || true
    rm -f "$dir/frozen.pids"
    log "resumed $name's postgres"
}

# Isolates the leader's node for SECONDS, then lets it back. Rules in table inet securepush_failover (output hook;
# on loopback every packet passes it once), all DROP, never REJECT, so no RST or ICMP reaches anyone:
#   - every packet sent by a socket of the node's user (Patroni, PostgreSQL, pg_rewind...): meta skuid;
#   - every packet to or from the node's PostgreSQL, REST and Raft ports (SYNs to it; SYN-ACKs from it, which
#     leave from request sockets that carry no uid);
#   - every packet of a connection the node sent on since the fault (its conntrack entry gets a mark): so the
#     peers' replies on connections the node opened (Raft to lower addresses, replication) do not reach it either.
# Its own local traffic (Patroni to its PostgreSQL over a Unix socket) goes on, as on a host cut off the network.
# Limits: an idle connection the node opened can still deliver one packet to it before the mark is set; the
# table is per machine, so one drop at a time.
cluster_drop_primary() {
    local dir="$1" seconds="$2" leader name port pid i uid ports
    _cl_load "$dir" || return 1
    leader="$(cluster_leader "$dir")" || return 1
    read -r name port pid <<<"$leader"
    echo "$leader"
    i="${name#node}"
    uid="$(id -u "$(_cl_node_user "$i")")"
    ports="$(_cl_pg_port "$i"), $(_cl_rest_port "$i"), $(_cl_raft_port "$i")"
    nft -f - <<NFT
table inet securepush_failover {
    chain output {
        type filter hook output priority 0; policy accept;
        meta skuid $uid ct mark set 0x5350 drop
        ct mark 0x5350 drop
        tcp dport { $ports } drop
        tcp sport { $ports } drop
    }
}
NFT
    echo securepush_failover >"$dir/nft.table"
    log "dropping all traffic of $name (uid $uid, ports $ports) for $seconds s"
    sleep "$seconds"
    nft delete table inet securepush_failover 2>/dev/null || true
    rm -f "$dir/nft.table"
    log "$name's traffic flows again"
}

# Stops HAProxy and the nodes (SIGTERM: Patroni stops its PostgreSQL), then kills whatever is left, by pid:
# Patroni and its children, each node's postmaster (postmaster.pid) and its children. Bounded (~40 s).
cluster_stop() {
    local dir="$1" pid pids="" i node postmaster deadline
    [ -d "$dir" ] || return 0
    if [ -f "$dir/nft.table" ]; then nft delete table inet "$(cat "$dir/nft.table")" 2>/dev/null || true; rm -f "$dir/nft.table"; fi
    if [ -f "$dir/frozen.pids" ]; then kill -CONT $(cat "$dir/frozen.pids") 2>/dev/null || true; rm -f "$dir/frozen.pids"; fi
    if [ -f "$dir/haproxy.pid" ]; then kill -TERM "$(cat "$dir/haproxy.pid")" 2>/dev/null || true; fi
    for i in 1 2 3; do
        node="node$i"
        [ -f "$dir/$node.pid" ] || continue
        pid="$(cat "$dir/$node.pid")"
        pids="$pids $pid $(_cl_children "$pid")"
        kill -TERM "$pid" 2>/dev/null || true
    done
    deadline=$((SECONDS + 30))
    for pid in $pids; do
        while kill -0 "$pid" 2>/dev/null && [ $SECONDS -lt $deadline ]; do sleep 0.2; done
    done
    for i in 1 2 3; do
        postmaster="$(head -1 "$dir/node$i/data/postmaster.pid" 2>/dev/null || true)"
        if [ -n "$postmaster" ] && kill -0 "$postmaster" 2>/dev/null &&
            [ "$(readlink "/proc/$postmaster/cwd" 2>/dev/null)" = "$dir/node$i/data" ]; then
            pids="$pids $postmaster $(_cl_children "$postmaster")"
        fi
    done
    [ -f "$dir/haproxy.pid" ] && pids="$pids $(cat "$dir/haproxy.pid")"
    for pid in $pids; do
        if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid" 2>/dev/null || true; fi
    done
    rm -f "$dir"/node?.pid "$dir/haproxy.pid"
    log "cluster in $dir stopped"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
    set -euo pipefail
    command="${1:-}"
    case "$command" in
        install|start|wait_healthy|leader|wait_writable|switchover|kill_primary|freeze_primary|drop_primary|stop)
            shift; "cluster_$command" "$@" ;;
        *) echo "usage: $0 install|start|wait_healthy|leader|wait_writable|switchover|kill_primary|freeze_primary|drop_primary|stop DIR [ARGS]" >&2; exit 2 ;;
    esac
fi
