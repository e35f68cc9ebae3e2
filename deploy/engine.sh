#!/usr/bin/env bash
# Start or stop a Docker engine on a machine that has none running (for the deployment tests
# and for people). Only an engine started by this script is ever stopped by it.
#
#   deploy/engine.sh start    # install docker.io if needed, start dockerd, wait until it answers
#   deploy/engine.sh stop     # stop the dockerd this script started (no-op otherwise)
#   deploy/engine.sh status
#
# The engine runs with overlay2 storage and --iptables=false (this machine has no NAT for
# containers: builds use the host network, containers on one Compose network still reach
# each other, and published ports go through the userland proxy). Images stay in
# /var/lib/docker between runs, so the base image and build layers are cached.
set -euo pipefail

run_dir="${ARENA_ENGINE_RUN_DIR:-/var/run/arena-engine}"
pid_file="$run_dir/dockerd.pid"
log_file="$run_dir/dockerd.log"
start_timeout="${ARENA_ENGINE_TIMEOUT:-60}"

answers() { docker info >/dev/null 2>&1; }

fail() { echo "engine.sh: $*" >&2; exit 1; }

install_engine() {
    [[ $(id -u) -eq 0 ]] || fail "no dockerd installed and not root: cannot apt-get install docker.io"
    command -v apt-get >/dev/null || fail "no dockerd installed and no apt-get to install docker.io"
    echo "installing docker.io from Debian's packages"
    export DEBIAN_FRONTEND=noninteractive
    if ! apt-get install -y -qq --no-install-recommends docker.io >"$run_dir/apt.log" 2>&1; then
        apt-get update -qq >>"$run_dir/apt.log" 2>&1 || true
        apt-get install -y -qq --no-install-recommends docker.io >>"$run_dir/apt.log" 2>&1 \
            || fail "apt-get install docker.io failed: $(tail -n 5 "$run_dir/apt.log")"
    fi
}

start() {
    if answers; then
        if [[ -f "$pid_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
            echo "engine already running (dockerd $(cat "$pid_file") from an earlier start)"
        else
            echo "engine already running (not started by this script)"
        fi
        return 0
    fi
    mkdir -p "$run_dir"
    command -v dockerd >/dev/null || install_engine
    [[ $(id -u) -eq 0 ]] || fail "dockerd must be started as root"
    if [[ -f "$pid_file" ]] && kill -0 "$(cat "$pid_file")" 2>/dev/null; then
        fail "dockerd (pid $(cat "$pid_file")) runs but does not answer; see $log_file"
    fi
    rm -f "$pid_file"
    # setsid: the engine must not get the terminal's or the test runner's signals.
    setsid dockerd --storage-driver=overlay2 --iptables=false --ip-masq=false \
        --pidfile "$pid_file" >"$log_file" 2>&1 < /dev/null &
    local waited=0
    until answers; do
        if ! kill -0 $! 2>/dev/null; then
            fail "dockerd exited at start: $(tail -n 15 "$log_file")"
        fi
        if (( waited >= start_timeout * 5 )); then
            fail "dockerd did not answer within ${start_timeout}s: $(tail -n 15 "$log_file")"
        fi
        sleep 0.2
        waited=$((waited + 1))
    done
    echo "started dockerd (pid $(cat "$pid_file"), log $log_file)"
}

stop() {
    if [[ ! -f "$pid_file" ]]; then
        echo "no dockerd started by this script"
        return 0
    fi
    local pid
    pid=$(cat "$pid_file")
    if kill -0 "$pid" 2>/dev/null; then
        kill -TERM "$pid"
        for _ in $(seq 1 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
        if kill -0 "$pid" 2>/dev/null; then
            echo "dockerd $pid ignored SIGTERM for 30 s; sending SIGKILL" >&2
            kill -KILL "$pid"
        fi
    fi
    rm -f "$pid_file"
    echo "stopped dockerd (pid $pid)"
}

case "${1:-}" in
    start) start ;;
    stop) stop ;;
    status) if answers; then echo "engine answers"; else echo "no engine"; exit 1; fi ;;
    *) echo "usage: $0 start|stop|status" >&2; exit 2 ;;
esac
