#!/usr/bin/env bash
# Build the Arena image (deploy/Dockerfile) on a machine that reaches no container registry.
#
#   deploy/build-image.sh [--base IMAGE] [--tag TAG]
#
# --base defaults to $ARENA_BASE_IMAGE, else the stand-in built by build-base-image.sh
# (built first if missing). The host's CA bundle and http(s) pip index settings are staged in
# deploy/build-extras/ so that pip inside the build trusts the same proxy as pip here; the
# build uses the host network because the engine runs with --iptables=false (no NAT for
# containers). Layers are cached by the engine: a rebuild with unchanged sources is quick.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
repo="$(dirname "$here")"
base="${ARENA_BASE_IMAGE:-}"
tag="${ARENA_IMAGE:-arena:latest}"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --base) base="$2"; shift 2 ;;
        --tag) tag="$2"; shift 2 ;;
        *) echo "usage: $0 [--base IMAGE] [--tag TAG]" >&2; exit 2 ;;
    esac
done
if [[ -z "$base" ]]; then
    base="arena-base:bookworm-py311"
    "$here/build-base-image.sh" "$base"
fi

# Stage pip's trust and index settings from this host (pip's own view of its config).
extras="$here/build-extras"
trap 'rm -f "$extras/ca-bundle.crt" "$extras/pip.conf"' EXIT
pip_cmd=(python3 -m pip)
[[ -x "$repo/.venv/bin/python" ]] && pip_cmd=("$repo/.venv/bin/python" -m pip)
pip_value() {  # the last value pip reports for a key such as global.cert or :env:.index-url
    "${pip_cmd[@]}" config list 2>/dev/null | sed -n "s/^[^=]*\.$1='\(.*\)'$/\1/p" | tail -n1
}
cert="${PIP_CERT:-$(pip_value cert)}"
cert="${cert:-${SSL_CERT_FILE:-/etc/ssl/certs/ca-certificates.crt}}"
if [[ -f "$cert" ]]; then cp "$cert" "$extras/ca-bundle.crt"; fi
http_only() { tr ' ' '\n' | grep -E '^https?://' | tr '\n' ' ' || true; }
index="$(pip_value index-url | http_only)"
extra="$(pip_value extra-index-url | http_only)"
if [[ -n "${index// }${extra// }" ]]; then
    echo "[global]" > "$extras/pip.conf"
    if [[ -n "${index// }" ]]; then echo "index-url = ${index%% *}" >> "$extras/pip.conf"; fi
    if [[ -n "${extra// }" ]]; then echo "extra-index-url = ${extra% }" >> "$extras/pip.conf"; fi
fi

echo "building $tag from $base"
DOCKER_BUILDKIT=0 docker build --network host --build-arg "BASE_IMAGE=$base" \
    -f "$here/Dockerfile" -t "$tag" "$repo"
# Older builds of this image that lost their tag would pile up in the engine's store.
docker image prune --force --filter "label=org.opencontainers.image.title=arena" >/dev/null
