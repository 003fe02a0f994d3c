#!/bin/sh
# build.sh builds rocketgo's image with docker/Dockerfile's two stages on a
# machine with no registry and no module proxy: the base image (base.sh),
# the Go builder image (gobuild.sh: the base plus the host's Go toolchain),
# and a build context made in a temporary directory, so the clone stays
# clean: the clone's Go sources and docker/image, plus vendor/ from
# `go mod vendor` (the host's module cache; nothing is downloaded, nothing
# is committed). Docs and tests are left out of the context so that a change
# to them does not rebuild the binaries.
#
# Usage: docker/build.sh [tag]        (default rocketgo:5.3.3)
# Env:   BASE (default rocketgo-base:bookworm; any image with sh, useradd)
#        GO_IMAGE (default rocketgo-gobuild:local; golang:<v>-bookworm with
#                 a registry)
#        GOARCH: the binaries' architecture (default the engine's)
#        ROCKETGO_LIB_DIR: copy the built binaries there (the test reuses them)
set -eu

TAG=${1:-rocketgo:5.3.3}
BASE=${BASE:-rocketgo-base:bookworm}
GO_IMAGE=${GO_IMAGE:-rocketgo-gobuild:local}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)

[ "$BASE" != rocketgo-base:bookworm ] || "$here/base.sh" "$BASE"
[ "$GO_IMAGE" != rocketgo-gobuild:local ] || BASE=rocketgo-base:bookworm "$here/gobuild.sh" "$GO_IMAGE"

# copy_lib: the image's binaries into ROCKETGO_LIB_DIR.
copy_lib() {
	mkdir -p "$ROCKETGO_LIB_DIR"
	c=$(docker create "$TAG")
	docker cp "$c:/home/rocketmq/rocketmq-5.3.3/lib/." "$ROCKETGO_LIB_DIR/"
	docker rm "$c" >/dev/null
}

ctx=$(mktemp -d "${TMPDIR:-/tmp}/rocketgo-image.XXXXXX")
trap 'rm -rf "$ctx"' EXIT
(
	cd "$root"
	if git rev-parse --git-dir >/dev/null 2>&1; then
		git ls-files -co --exclude-standard -- go.mod go.sum '*.go' docker/Dockerfile docker/image
	else
		find . -path ./compat-tests -prune -o -path ./bin -prune -o \
			\( -name '*.go' -o -name go.mod -o -name go.sum -o -path './docker/image/*' \) -type f -print
	fi | grep -v -e '_test\.go$' -e '^compat-tests/' -e '^\./compat-tests/' | tar -T - -cf - | tar -C "$ctx" -xf -
	GOWORK=off GOFLAGS=-mod=mod go mod vendor -o "$ctx/vendor"
)
# Nothing changed since the image was built (same context and arguments):
# nothing to do. The legacy builder would find every layer cached too, but
# only after receiving the context.
sum=$( (cd "$ctx" && find . -type f | LC_ALL=C sort | xargs sha256sum
	echo "$BASE $GO_IMAGE ${GOARCH:-}") | sha256sum | cut -c1-16)
if [ "$(docker image inspect -f '{{index .Config.Labels "org.rocketgo.context"}}' "$TAG" 2>/dev/null)" = "$sum" ]; then
	echo "build.sh: $TAG is up to date (context $sum)"
	[ -z "${ROCKETGO_LIB_DIR:-}" ] || copy_lib
	exit 0
fi

# The Go build cache of the previous build (hard links: no copy), so that the
# build stage recompiles only what changed; the legacy builder, the only one
# Debian's docker.io has, mounts no cache into a RUN.
arch=${GOARCH:-$(docker version -f '{{.Server.Arch}}')}
cache=${ROCKETGO_DOCKER_CACHE:-/var/cache/rocketgo-docker}/gocache-$arch
[ ! -d "$cache" ] || cp -al "$cache" "$ctx/.gocache" 2>/dev/null || cp -a "$cache" "$ctx/.gocache"
args="--build-arg BASE=$BASE --build-arg GO_IMAGE=$GO_IMAGE --build-arg GOARCH=${GOARCH:-}"
oldb=$(docker image inspect -f '{{.Id}}' "rocketgo-build:$arch" 2>/dev/null || true)
# shellcheck disable=SC2086
docker build -q $args --target build -t "rocketgo-build:$arch" -f "$ctx/docker/Dockerfile" "$ctx" >/dev/null
newb=$(docker image inspect -f '{{.Id}}' "rocketgo-build:$arch")
old=$(docker image inspect -f '{{.Id}}' "$TAG" 2>/dev/null || true)
# shellcheck disable=SC2086
docker build -q $args --label "org.rocketgo.context=$sum" -t "$TAG" -f "$ctx/docker/Dockerfile" "$ctx" >/dev/null
if [ "$oldb" != "$newb" ]; then
	# Keep the build cache the build stage ended with for the next build,
	# and drop the previous build stage (its layers hold a cache too).
	c=$(docker create "$newb")
	rm -rf "$cache.new" && mkdir -p "$cache.new"
	docker cp "$c:/gocache/." "$cache.new/" || true
	docker rm "$c" >/dev/null
	rm -rf "$cache" && mv "$cache.new" "$cache"
	[ -z "$oldb" ] || docker rmi "$oldb" >/dev/null 2>&1 || true
fi
# A rebuild moves the tag: drop the image it left behind (if nothing uses it).
new=$(docker image inspect -f '{{.Id}}' "$TAG")
if [ -n "$old" ] && [ "$old" != "$new" ]; then
	docker rmi "$old" >/dev/null 2>&1 || true
fi
[ -z "${ROCKETGO_LIB_DIR:-}" ] || copy_lib
echo "build.sh: $TAG ($(docker image inspect -f '{{.Size}}' "$TAG" | awk '{printf "%.1f MB", $1/1e6}'))"
