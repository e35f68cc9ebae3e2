#!/bin/sh
# Entry point of the Arena image: the first argument picks the role.
#   registry | referee | ladder | worker | web [flags...]   -> python -m arena.services.<role>
#   redis durable|cache [redis-server flags...]  -> redis-server with Arena's ACL users, from
#       the password files in $ARENA_REDIS_SECRETS (default /run/secrets; redis_acl.py)
#   anything else (redis-server, redis-cli, python3, sh ...)  -> run as given
# Secrets may come as files (Docker/Compose secrets, Kubernetes volumes): ARENA_ADMIN_TOKEN_FILE
# names a file holding the admin token, exported as ARENA_ADMIN_TOKEN for the service.
set -eu

if [ -n "${ARENA_ADMIN_TOKEN_FILE:-}" ]; then
    if [ ! -r "$ARENA_ADMIN_TOKEN_FILE" ]; then
        echo "arena-entrypoint: cannot read ARENA_ADMIN_TOKEN_FILE=$ARENA_ADMIN_TOKEN_FILE" \
             "as uid $(id -u) (is it readable by the container user?)" >&2
        exit 64
    fi
    ARENA_ADMIN_TOKEN=$(tr -d '\r\n' < "$ARENA_ADMIN_TOKEN_FILE")
    export ARENA_ADMIN_TOKEN
    unset ARENA_ADMIN_TOKEN_FILE
fi

role="${1:-registry}"
case "$role" in
    registry|referee|ladder|worker|web)
        [ $# -gt 0 ] && shift
        exec python3 -m "arena.services.$role" --listen "${ARENA_LISTEN:-0.0.0.0:50051}" "$@"
        ;;
    redis)
        if [ $# -lt 2 ]; then
            echo "arena-entrypoint: usage: redis durable|cache [redis-server flags...]" >&2
            exit 64
        fi
        server="$2"
        shift 2
        acl="${TMPDIR:-/tmp}/arena-redis-users.acl"
        python3 -m arena.services.common.redis_acl "$server" \
            "${ARENA_REDIS_SECRETS:-/run/secrets}" "$acl"
        exec redis-server "$@" --aclfile "$acl"
        ;;
    *)
        exec "$@"
        ;;
esac
