#!/usr/bin/env bash
# Builds the svcdir-search container image from a built binary, with podman (or buildah).
#
#   deploy/container/build.sh [BINARY] [TAG]
#
# BINARY defaults to target/release/svcdir-search (`cargo build --release --bin svcdir-search`),
# TAG to svcdir-search:latest. The image holds the binary and the shared libraries `ldd` lists
# for it, copied from this machine: build on the distribution you run (or an older one).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
binary="${1:-$here/../../target/release/svcdir-search}"
tag="${2:-svcdir-search:latest}"
[ -x "$binary" ] || { echo "error: $binary is not an executable (cargo build --release first)" >&2; exit 1; }

context="$(mktemp -d)"
trap 'rm -rf "$context"' EXIT
mkdir -p "$context/rootfs/usr/local/bin" "$context/rootfs/tmp"
cp "$binary" "$context/rootfs/usr/local/bin/svcdir-search"
# Every library the binary loads, and the dynamic loader itself, at the same paths.
for lib in $(ldd "$binary" | grep -o '/[^ ]*'); do
    mkdir -p "$context/rootfs$(dirname "$lib")"
    cp -L "$lib" "$context/rootfs$lib"
done
# The CA certificates, for `--from https://...` and `s3://...` (the TLS client reads the
# system's trust store, and a scratch image has none).
ca=/etc/ssl/certs/ca-certificates.crt
[ -f "$ca" ] || { echo "error: $ca is missing (install the ca-certificates package)" >&2; exit 1; }
mkdir -p "$context/rootfs/etc/ssl/certs"
cp -L "$ca" "$context/rootfs$ca"
cp "$here/Containerfile" "$context/Containerfile"

if command -v podman >/dev/null 2>&1; then
    podman build --quiet --tag "$tag" "$context"
elif command -v buildah >/dev/null 2>&1; then
    buildah bud --quiet --tag "$tag" "$context"
else
    echo "error: neither podman nor buildah is installed" >&2
    exit 1
fi
