#!/bin/sh
# Runs Prometheus's promtool (rule checks and rule unit tests), installing it first if needed:
# the `promtool` on PATH, else a copy cached under $ARENA_TOOLS_DIR (default
# ~/.cache/arena/tools), else taken from Debian's `prometheus` package (apt-get download +
# dpkg-deb -x: nothing is installed system-wide and no service is started).
#   deploy/promtool.sh check rules FILE...      deploy/promtool.sh test rules FILE...
set -eu

if command -v promtool >/dev/null 2>&1; then
    exec promtool "$@"
fi
tools="${ARENA_TOOLS_DIR:-$HOME/.cache/arena/tools}"
if [ ! -x "$tools/promtool" ]; then
    if ! command -v apt-get >/dev/null 2>&1 || ! command -v dpkg-deb >/dev/null 2>&1; then
        echo "promtool.sh: promtool is not on PATH and this machine has no apt-get/dpkg-deb" \
             "to fetch Debian's prometheus package; install promtool and retry" >&2
        exit 69
    fi
    work=$(mktemp -d)
    trap 'rm -rf "$work"' EXIT
    if ! (cd "$work" && apt-get download prometheus >/dev/null 2>&1); then
        apt-get update -qq >/dev/null 2>&1 || true
        (cd "$work" && apt-get download prometheus) >&2 || {
            echo "promtool.sh: could not download Debian's prometheus package" >&2
            exit 69
        }
    fi
    dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
    mkdir -p "$tools"
    cp "$work/root/usr/bin/promtool" "$tools/promtool.tmp"
    mv "$tools/promtool.tmp" "$tools/promtool"
fi
exec "$tools/promtool" "$@"
