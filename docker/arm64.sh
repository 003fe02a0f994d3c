#!/bin/sh
# arm64.sh builds rocketgo's linux/arm64 image on an amd64 host and runs it
# under qemu-user-static (binfmt_misc): the arm64 base (base.sh ARCH=arm64),
# the image (build.sh GOARCH=arm64: the build stage cross-compiles), then a
# name server and a broker container (stock conf/broker.conf), the first
# send timed from `docker run` (mqbench probe), 10 000 messages produced and
# consumed, and TestDocker (the official Go client, a `docker restart` of
# the broker) from the host. Not in make test: emulation is slow and the
# first build compiles everything for arm64.
#
# Usage: docker/arm64.sh [tag]        (default rocketgo:5.3.3-arm64)
set -eu

TAG=${1:-rocketgo:5.3.3-arm64}
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
export TMPDIR=${TMPDIR:-/tmp/rocketgo-docker-arm64}
mkdir -p "$TMPDIR"

ARCH=arm64 "$here/base.sh" rocketgo-base:bookworm-arm64
GOARCH=arm64 BASE=rocketgo-base:bookworm-arm64 "$here/build.sh" "$TAG"

work=$(mktemp -d "$TMPDIR/arm64.XXXXXX")
net=rgarm$$
trap 'docker rm -f "$net-ns" "$net-broker" >/dev/null 2>&1 || true; docker network rm "$net" >/dev/null 2>&1 || true; rm -rf "$work"' EXIT
(cd "$root" && CGO_ENABLED=0 GOWORK=off go build -o "$work/" ./cmd/mqbench)
cip() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$1"; }

docker network create "$net" >/dev/null
t0=$(date +%s%N)
docker run -d --name "$net-ns" --network "$net" "$TAG" sh mqnamesrv >/dev/null 2>&1
docker run -d --name "$net-broker" --network "$net" "$TAG" sh mqbroker -n "$net-ns:9876" -c ../conf/broker.conf >/dev/null 2>&1
echo "arm64.sh: $(docker exec "$net-broker" uname -m) container, image $(docker image inspect -f '{{.Os}}/{{.Architecture}}' "$TAG")"
ns=$(cip "$net-ns"):9876
broker=$(cip "$net-broker"):10911
"$work/mqbench" probe -n "$ns" -t ArmProbe -create-topic -since "$t0" -timeout 120s
"$work/mqbench" produce -n "$ns" -t ArmLoad -create-topic -c 2 -w 16 -s 1024 -count 10000 | grep SUMMARY
"$work/mqbench" consume -n "$ns" -t ArmLoad -count 10000 -d 120s | grep SUMMARY
cd "$root/compat-tests"
ROCKETGO_DOCKER=1 ROCKETGO_DOCKER_NS=$ns ROCKETGO_DOCKER_BROKER=$broker ROCKETGO_DOCKER_BROKER_CONTAINER=$net-broker \
	GOWORK=off go test -count=1 -v -run '^TestDocker$' -timeout 5m .
