#!/bin/sh
# Make sure Debian's Chromium is installed for the browser tests and `make screenshots`.
#
#   tools/install-chromium.sh          # prints the browser's path, installing it if missing
#
# The tests drive /usr/bin/chromium (or $ARENA_CHROMIUM) through Playwright; Playwright's
# own browser downloads are never used. Installing needs apt-get and root (or sudo without
# a password). Anything else ends with a non-zero status and the reason on stderr, so a
# missing browser fails the tests loudly instead of skipping them.
set -eu

browser="${ARENA_CHROMIUM:-/usr/bin/chromium}"
if [ -x "$browser" ]; then
    echo "$browser"
    exit 0
fi
if [ -n "${ARENA_CHROMIUM:-}" ]; then
    echo "install-chromium: ARENA_CHROMIUM=$browser is not an executable file" >&2
    exit 1
fi
if ! command -v apt-get >/dev/null 2>&1; then
    echo "install-chromium: no $browser and no apt-get to install Debian's chromium;" \
         "install Chromium and set ARENA_CHROMIUM to its path" >&2
    exit 1
fi
if [ "$(id -u)" -eq 0 ]; then
    as_root=""
elif command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
    as_root="sudo -n"
else
    echo "install-chromium: installing Debian's chromium needs root (or sudo without a" \
         "password); run 'apt-get install chromium' as root, or set ARENA_CHROMIUM" >&2
    exit 1
fi

echo "install-chromium: installing Debian's chromium (a few minutes the first time)" >&2
export DEBIAN_FRONTEND=noninteractive
# The package lists may be missing or stale on a fresh machine: one update, then install.
$as_root apt-get update -q >&2
# fonts-dejavu-core: readable text in the pages and screenshots on a machine without fonts.
$as_root apt-get install -y -q --no-install-recommends chromium fonts-dejavu-core >&2
if [ ! -x "$browser" ]; then
    echo "install-chromium: apt-get finished but $browser is still missing" >&2
    exit 1
fi
echo "$browser"
