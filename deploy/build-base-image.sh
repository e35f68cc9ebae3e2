#!/usr/bin/env bash
# Build a stand-in for the official slim Python image without reaching a container registry:
# debootstrap a minimal Debian bookworm with Python 3.11, venv and CA certificates, then
# `docker import` it. The result is cached: nothing is done if the tag already exists
# (pass --force to rebuild).
#
#   deploy/build-base-image.sh [--force] [TAG]        default TAG: arena-base:bookworm-py311
#
# Needs root, debootstrap and a running Docker engine (deploy/engine.sh start). The Debian
# mirror is the one apt uses on this machine unless ARENA_DEBIAN_MIRROR says otherwise.
set -euo pipefail

force=0
if [[ "${1:-}" == "--force" ]]; then force=1; shift; fi
tag="${1:-${ARENA_BASE_IMAGE:-arena-base:bookworm-py311}}"
suite="bookworm"
packages="python3.11,python3-venv,ca-certificates"

if [[ $force -eq 0 ]] && docker image inspect "$tag" >/dev/null 2>&1; then
    echo "base image $tag exists (cached); use --force to rebuild"
    exit 0
fi
if [[ $(id -u) -ne 0 ]]; then
    echo "build-base-image.sh: debootstrap needs root" >&2
    exit 1
fi
if ! command -v debootstrap >/dev/null; then
    echo "build-base-image.sh: installing debootstrap"
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends debootstrap \
        || { apt-get update -qq && DEBIAN_FRONTEND=noninteractive \
             apt-get install -y -qq --no-install-recommends debootstrap; }
fi

# The mirror apt already uses here (deb822 or one-line sources), else Debian's default.
mirror="${ARENA_DEBIAN_MIRROR:-}"
if [[ -z "$mirror" ]]; then
    mirror=$(sed -n 's/^URIs:[[:space:]]*\(\S*debian\/\?\)$/\1/p' \
                 /etc/apt/sources.list.d/*.sources 2>/dev/null | head -n1 || true)
fi
if [[ -z "$mirror" && -f /etc/apt/sources.list ]]; then
    mirror=$(awk '$1 == "deb" && $2 !~ /security/ {print $2; exit}' /etc/apt/sources.list)
fi
mirror="${mirror:-http://deb.debian.org/debian}"

work=$(mktemp -d /var/tmp/arena-base.XXXXXX)
trap 'rm -rf "$work"' EXIT
root="$work/rootfs"
echo "debootstrap $suite (minbase + $packages) from $mirror"
debootstrap --variant=minbase --include="$packages" "$suite" "$root" "$mirror" \
    > "$work/debootstrap.log" 2>&1 || { tail -n 40 "$work/debootstrap.log" >&2; exit 1; }

# Slim it down like the official image: no apt lists, caches, docs or man pages.
rm -rf "$root"/var/lib/apt/lists/* "$root"/var/cache/apt/*.bin "$root"/var/cache/apt/archives/*.deb \
       "$root"/usr/share/doc/* "$root"/usr/share/man/* "$root"/usr/share/info/* "$root"/tmp/*
ln -sf python3.11 "$root/usr/bin/python"

tar --numeric-owner -C "$root" -c . | docker import \
    --change 'ENV PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin' \
    --change 'ENV LANG=C.UTF-8' \
    --change 'CMD ["python3"]' \
    --message "debootstrap $suite minbase + $packages" \
    - "$tag" >/dev/null
echo "built base image $tag ($(docker image inspect -f '{{.Size}}' "$tag" | numfmt --to=iec))"
