#!/bin/sh
# build.sh builds rocketgo's image: the base image (base.sh), the static
# binaries (on the host, CGO_ENABLED=0) and `docker build` over a context
# made in a temporary directory, so the clone stays clean.
#
# Usage: docker/build.sh [tag]        (default rocketgo:5.3.3)
# Env:   BASE (default rocketgo-base:bookworm; any image with sh, useradd)
#        ROCKETGO_LIB_DIR: keep the built binaries there (the test reuses them)
set -eu

TAG=${1:-rocketgo:5.3.3}
BASE=${BASE:-rocketgo-base:bookworm}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

if [ "$BASE" = rocketgo-base:bookworm ]; then
	"$here/base.sh" "$BASE"
fi

ctx=$(mktemp -d "${TMPDIR:-/tmp}/rocketgo-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
cp -R "$here/image/." "$ctx/"
mkdir -p "$ctx/lib"
(cd "$root" && CGO_ENABLED=0 GOWORK=off go build -trimpath -ldflags='-s -w' -o "$ctx/lib/" \
	./cmd/mqnamesrv ./cmd/mqbroker ./cmd/mqproxy ./cmd/mqshutdown ./cmd/mqadmin)
if [ -n "${ROCKETGO_LIB_DIR:-}" ]; then
	mkdir -p "$ROCKETGO_LIB_DIR"
	cp "$ctx"/lib/* "$ROCKETGO_LIB_DIR/"
fi
old=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
docker build -q --build-arg "BASE=$BASE" -t "$TAG" -f "$here/Dockerfile" "$ctx" >/dev/null
# A rebuild moves the tag: drop the image it left behind (if nothing uses it).
new=$(docker image inspect -f '{{.Id}}' "$TAG")
if [ -n "$old" ] && [ "$old" != "$new" ]; then
	docker rmi "$old" >/dev/null 2>&1 || true
fi
echo "build.sh: $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%.1f MB", $1/1e6}'))"
