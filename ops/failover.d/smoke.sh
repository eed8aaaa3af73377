#!/usr/bin/env bash
# Smoke test of the HA cluster harness (ops/failover.d/cluster.sh): starts a real 3-node Patroni cluster with
# HAProxy on loopback, injects each fault once (planned switchover; kill -9 of the primary's postmaster; the
# primary frozen by SIGSTOP; the primary's traffic dropped by nftables) and measures, with a psql write loop on
# the multi-host URL (target_session_attrs=read-write), the seconds from the fault to the first write committed
# by the new primary. Between faults it waits until the cluster has healed (both standbys streaming, one
# synchronously). Prints a markdown table, stops the cluster, and exits non-zero when a fault is not followed
# by a write on another node within --write-timeout or the cluster does not heal. Needs root.
#   ops/failover.d/smoke.sh [--faults switchover,kill,freeze,drop] [--fault-seconds N] [--write-timeout N] [--keep]
set -euo pipefail
source "$(dirname "$0")/cluster.sh"

FAULTS="switchover,kill,freeze,drop" FAULT_SECONDS=40 WRITE_TIMEOUT=90 HEAL_TIMEOUT=120 KEEP=0
while [ $# -gt 0 ]; do
    case "$1" in
        --faults) FAULTS="$2"; shift 2 ;;
        --fault-seconds) FAULT_SECONDS="$2"; shift 2 ;;
        --write-timeout) WRITE_TIMEOUT="$2"; shift 2 ;;
        --keep) KEEP=1; shift ;;
        *) echo "unknown option $1" >&2; exit 2 ;;
    esac
done
IFS=',' read -ra SELECTED <<<"$FAULTS"
for fault in "${SELECTED[@]}"; do
    case "$fault" in switchover|kill|freeze|drop) ;; *) echo "unknown fault $fault (switchover, kill, freeze, drop)" >&2; exit 2 ;; esac
done

DIR="$(mktemp -d /tmp/securepush-failover.XXXXXX)"
FAULT_PID="" WATCHDOG_PID=""
cleanup() {
    set +e
    if [ -n "$FAULT_PID" ]; then
        local child
        for child in $(_cl_children "$FAULT_PID"); do kill -TERM "$child" 2>/dev/null; done
        kill -TERM "$FAULT_PID" 2>/dev/null
    fi
    cluster_stop "$DIR"
    if [ -n "$WATCHDOG_PID" ]; then
        local child
        for child in $(_cl_children "$WATCHDOG_PID"); do kill -TERM "$child" 2>/dev/null; done
        kill -TERM "$WATCHDOG_PID" 2>/dev/null
    fi
    if [ "$KEEP" = 1 ]; then log "logs kept in $DIR"; else rm -rf "$DIR"; fi
}
trap cleanup EXIT
trap 'exit 143' TERM INT
# The whole run is bounded: start, each fault with its write loop and healing, stop.
( sleep $((300 + ${#SELECTED[@]} * (FAULT_SECONDS + WRITE_TIMEOUT + HEAL_TIMEOUT))); log "smoke test timed out"; kill -TERM $$ ) &
WATCHDOG_PID=$!

start="$(_cl_now)"
cluster_start "$DIR" >/dev/null
START_SECONDS="$(_cl_since "$start")"

ROWS=() FAILED=0
for fault in "${SELECTED[@]}"; do
    read -r old_name old_port _ < <(cluster_leader "$DIR")
    log "fault $fault on $old_name (:$old_port)"
    t0="$(_cl_now)"
    case "$fault" in
        switchover) cluster_switchover "$DIR" >/dev/null & ;;
        kill) cluster_kill_primary "$DIR" >/dev/null & ;;
        freeze) cluster_freeze_primary "$DIR" "$FAULT_SECONDS" >/dev/null & ;;
        drop) cluster_drop_primary "$DIR" "$FAULT_SECONDS" >/dev/null & ;;
    esac
    FAULT_PID=$!
    if result="$(cluster_wait_writable "$DIR" "$WRITE_TIMEOUT" "$old_port" "$t0")"; then
        read -r seconds new_port <<<"$result"
        log "$fault: first write on :$new_port after $seconds s"
    else
        seconds="no write in $WRITE_TIMEOUT s" new_port="-"; FAILED=1
    fi
    if ! wait "$FAULT_PID"; then log "$fault: the fault itself failed"; FAILED=1; fi
    FAULT_PID=""
    healed=yes haproxy=-
    if ! cluster_wait_healthy "$DIR" "$HEAL_TIMEOUT"; then healed=no; FAILED=1; fi
    if [ "$healed" = yes ]; then
        # HAProxy (checks every second, OPTIONS /primary) leads to the primary.
        leader_port="$(cluster_leader "$DIR" | awk '{ print $2 }')"
        deadline=$((SECONDS + 10))
        while :; do
            haproxy="$(PGCONNECT_TIMEOUT=2 timeout 5 "$PG_BIN/psql" "$CLUSTER_HAPROXY_URL" -qAtXc \
                "SELECT inet_server_port() FROM (SELECT 1) s WHERE NOT pg_is_in_recovery()" 2>/dev/null || true)"
            [ "$haproxy" = "$leader_port" ] && break
            if [ $SECONDS -ge $deadline ]; then log "HAProxy leads to '${haproxy:-nothing}', not to the primary :$leader_port"; FAILED=1; break; fi
            sleep 0.5
        done
        haproxy=":${haproxy:--}"
    fi
    ROWS+=("| $fault | $old_name :$old_port | :$new_port | $seconds | $healed | $haproxy |")
    [ "$healed" = yes ] || break
done

echo "cluster start: $START_SECONDS s (3 nodes streaming, application database created)"
echo
echo "| fault | old primary | new primary | seconds to first write | healed | HAProxy leads to |"
echo "|---|---|---|---|---|---|"
printf '%s\n' "${ROWS[@]}"
exit "$FAILED"
