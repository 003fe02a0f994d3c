#!/bin/sh
# gobuild.sh makes the image docker/Dockerfile's build stage runs on where no
# registry serves golang:<version>: the base image (base.sh) plus this
# host's Go toolchain, $(go env GOROOT), at /usr/local/go. It is rebuilt when
# the host's `go version` differs from the one it was made with (a label).
#
# Usage: docker/gobuild.sh [image]     (default rocketgo-gobuild:local)
# Env:   BASE (default rocketgo-base:bookworm)
set -eu

IMAGE=${1:-rocketgo-gobuild:local}
BASE=${BASE:-rocketgo-base:bookworm}
here=$(cd "$(dirname "$0")" && pwd)
want=$(go env GOVERSION)

have=$(docker image inspect -f '{{index .Config.Labels "org.rocketgo.goversion"}}' "$IMAGE" 2>/dev/null || true)
if [ "$have" = "$want" ]; then
	echo "gobuild.sh: $IMAGE exists ($want)"
	exit 0
fi
[ "$BASE" != rocketgo-base:bookworm ] || "$here/base.sh" "$BASE"

ctx=$(mktemp -d "${TMPDIR:-/tmp}/rocketgo-gobuild.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
# The toolchain without its tests and docs (a third of GOROOT).
tar -C "$(go env GOROOT)" --exclude=./test --exclude=./doc --exclude='*_test.go' --exclude=testdata \
	-cf - . | (mkdir -p "$ctx/go" && tar -C "$ctx/go" -xf -)
cat >"$ctx/Dockerfile" <<DOCKERFILE
FROM $BASE
COPY go/ /usr/local/go/
ENV PATH=/usr/local/go/bin:\$PATH GOTOOLCHAIN=local
LABEL org.rocketgo.goversion=$want
DOCKERFILE
old=$(docker image inspect -f '{{.Id}}' "$IMAGE" 2>/dev/null || true)
docker build -q -t "$IMAGE" "$ctx" >/dev/null
[ -z "$old" ] || docker rmi "$old" >/dev/null 2>&1 || true
echo "gobuild.sh: $IMAGE built ($want)"
