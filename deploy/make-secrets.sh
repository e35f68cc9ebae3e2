#!/bin/sh
# The secrets docker-compose.yml mounts, in $ARENA_SECRETS_DIR (default deploy/secrets):
# the admin token and one Redis password per ACL user, each made once (files already there
# are kept). With --tls also a CA and a certificate for the services' names, for
# deploy/compose.tls.yml (made again with --tls only when missing or expiring).
#
# The services run as uid 10001 and read these files through bind mounts, so the files are
# world-readable and the folder is 0700: nobody else on the host gets in. (Or chown the
# files to 10001 and keep them 0600.) Nothing here is ever committed (secrets/.gitignore)
# or sent to an image build (.dockerignore).
set -eu

here=$(cd "$(dirname "$0")" && pwd)
dir="${ARENA_SECRETS_DIR:-$here/secrets}"
python="${ARENA_PYTHON:-$here/../.venv/bin/python}"
[ -x "$python" ] || python=python3

mkdir -p "$dir"
chmod 700 "$dir"
for name in admin_token redis_admin_password redis_registry_password \
            redis_referee_password redis_ladder_password redis_worker_password; do
    if [ ! -s "$dir/$name" ]; then
        "$python" -c 'import secrets; print(secrets.token_urlsafe(32))' > "$dir/$name"
        echo "made $dir/$name"
    fi
    chmod 644 "$dir/$name"
done

if [ "${1:-}" = "--tls" ]; then
    # The names the services reach each other by; the host reaches them on 127.0.0.1.
    "$python" -m arena.services.common.tls "$dir/tls" --host registry --host ladder \
        --host referee --host worker --host analyst
    chmod 755 "$dir/tls"
    chmod 644 "$dir/tls/service.key" "$dir/tls/client.key"   # ca.key stays 0600, unmounted
fi
