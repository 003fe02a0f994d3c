#!/bin/sh
# test.sh is make test-docker: it installs and starts what is missing (the
# docker.io engine, Debian's docker-compose), builds the base image and
# rocketgo's image (build.sh), checks that NODE_ROLE=controller starts a
# controller, then for each compose file brings it up as a
# fresh clone has it (no data directory made or chowned beforehand: the
# files' `init` service must do it) under a unique project name with every
# port published on a free host port, waits until every service with a
# health check reports healthy, runs a compat-tests test from the host and
# tears it down (containers, networks, volumes, the project directory)
# whatever happened:
#   docker-compose.yml      TestDocker   (Go client v2 through the published
#                           ports; the sends counted on the published metrics
#                           port; the image's mqbroker-drain makes the broker
#                           read-only in routes; restarts the broker container
#                           and checks nothing acknowledged was lost)
#   docker-compose-5.x.yml  TestDocker5x (Go v5 SDK through the proxy
#                           container, which reaches the broker container)
#   docker-compose-2m2s.yml TestDocker   (two masters, two slaves; through
#                           broker-a's container address, its slave in routes)
#   docker-compose-controller.yml TestDockerController (three controllers
#                           elect a master of three brokers; its container
#                           stopped, another is elected and nothing
#                           acknowledged is lost)
# Each Go test runs twice: from the host through the published ports, then
# from a container on the compose network (no container stopped there). From
# the host the official Java clients run too (when mvn is there):
#   docker-compose.yml      TestDockerJava   (the 4.9.8 Remoting client)
#   docker-compose-5.x.yml  TestDockerJava5x (the 5.x gRPC SDK, proxy container)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
export TMPDIR=${TMPDIR:-/tmp/rocketgo-docker-test}
mkdir -p "$TMPDIR"
IMAGE=${ROCKETGO_IMAGE:-rocketgo:5.3.3}

# no_engine REASON: without an engine nothing here can run. With
# ROCKETGO_DOCKER_OPTIONAL=1 (.ci/run, make test) that is said loudly and
# the run succeeds; otherwise it fails.
no_engine() {
	echo "=============================================================" >&2
	echo "test-docker SKIPPED: no Docker engine here: $1" >&2
	echo "=============================================================" >&2
	[ "${ROCKETGO_DOCKER_OPTIONAL:-}" = 1 ] && exit 0
	exit 1
}

need() { # need CMD PACKAGE: apt-get install PACKAGE unless CMD exists
	command -v "$1" >/dev/null 2>&1 && return 0
	echo "test.sh: installing $2" >&2
	apt-get install -y "$2" >"$TMPDIR/apt-$2.log" 2>&1 || {
		apt-get update >/dev/null 2>&1 && apt-get install -y "$2" >"$TMPDIR/apt-$2.log" 2>&1
	} || no_engine "apt-get install $2 failed (log $TMPDIR/apt-$2.log)"
}
need docker docker.io
need docker-compose docker-compose
need debootstrap debootstrap
if ! docker info >/dev/null 2>&1; then
	echo "test.sh: starting dockerd (log /tmp/dockerd.log)" >&2
	nohup dockerd >/tmp/dockerd.log 2>&1 &
	i=0
	until docker info >/dev/null 2>&1; do
		i=$((i + 1))
		[ $i -le 60 ] || { tail -20 /tmp/dockerd.log >&2; no_engine "dockerd did not start within 60 s"; }
		sleep 1
	done
fi

work=$(mktemp -d "$TMPDIR/run.XXXXXX")
t0=$(date +%s)
ROCKETGO_LIB_DIR=$work/lib "$here/build.sh" "$IMAGE"
echo "test.sh: image built in $(($(date +%s) - t0))s"

# NODE_ROLE=controller with the image's CMD: one controller on the image's
# controller-standalone.conf, as Apache's entrypoint contract says.
ctl=$(docker run -d -e NODE_ROLE=controller "$IMAGE")
i=0
until docker logs "$ctl" 2>&1 | grep -q 'The Controller boot success'; do
	i=$((i + 1))
	[ $i -le 30 ] || { docker logs "$ctl" >&2; docker rm -f "$ctl" >/dev/null; echo "test.sh: FAIL: NODE_ROLE=controller did not boot" >&2; exit 1; }
	sleep 1
done
docker rm -f "$ctl" >/dev/null
echo "test.sh: NODE_ROLE=controller boots a controller"

# Ports: 20 consecutive free ports below the ephemeral range. The broker's
# ports are the same inside and out, because the broker advertises
# brokerIP1:listenPort and clients on the host dial exactly that.
port_free() { ! ss -Hltn "sport = :$1" 2>/dev/null | grep -q .; }
pick_base() {
	tries=0
	while [ $tries -lt 50 ]; do
		b=$((20000 + ($(od -An -N2 -tu2 /dev/urandom) % 600) * 20))
		ok=1
		for o in $(seq 0 19); do port_free $((b + o)) || ok=0; done
		[ $ok = 1 ] && { echo $b; return 0; }
		tries=$((tries + 1))
	done
	return 1
}
base=$(pick_base)
NAMESRV_PORT=$base
BROKER_FAST_PORT=$((base + 2))
BROKER_PORT=$((base + 4))
BROKER_HA_PORT=$((base + 5))
PROXY_REMOTING_PORT=$((base + 6))
PROXY_GRPC_PORT=$((base + 7))
BROKER_METRICS_PORT=$((base + 8))
export NAMESRV_PORT BROKER_FAST_PORT BROKER_PORT BROKER_HA_PORT PROXY_REMOTING_PORT PROXY_GRPC_PORT BROKER_METRICS_PORT
# The other files' metrics and controller ports: published, not tested.
o=9
for v in BROKER_A_METRICS_PORT BROKER_A_S_METRICS_PORT BROKER_B_METRICS_PORT BROKER_B_S_METRICS_PORT \
	CONTROLLER_N0_PORT CONTROLLER_N1_PORT CONTROLLER_N2_PORT \
	BROKER_N0_METRICS_PORT BROKER_N1_METRICS_PORT BROKER_N2_METRICS_PORT; do
	eval "export $v=$((base + o))"
	o=$((o + 1))
done
export ROCKETGO_IMAGE=$IMAGE

# brokerIP1: the host's own address, reachable from the host (through the
# published port) and from containers (docker's proxy on the host port).
hostip=$(ip -4 route get 1.1.1.1 2>/dev/null | awk '{for (i = 1; i < NF; i++) if ($i == "src") print $(i + 1)}')
[ -n "$hostip" ] || hostip=127.0.0.1

cip() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$1"; }
svc() { (cd "$proj" && docker-compose -p "$name" -f "$file" ps -q "$1" 2>/dev/null) || true; }

# up FILE: a fresh project directory laid out as docker/ is in a clone
# (broker.conf given the test's brokerIP1 and ports), `docker-compose up -d`
# of FILE under a unique project name, then every service with a health
# check healthy.
up() {
	file=$1
	upn=$((upn + 1))
	name=rgdocker$$x$upn
	proj=$work/$name
	mkdir -p "$proj"
	cp -R "$here/data" "$here/proxy" "$here/$file" "$proj/"
	{
		cat "$here/data/broker/conf/broker.conf"
		echo "brokerIP1 = $hostip"
		echo "listenPort=$BROKER_PORT"
		echo "haListenPort=$BROKER_HA_PORT"
	} >"$proj/data/broker/conf/broker.conf"
	t0=$(date +%s)
	(cd "$proj" && docker-compose -p "$name" -f "$file" up -d) >"$work/up.log" 2>&1 || {
		cat "$work/up.log" >&2
		return 1
	}
	wait_healthy || return 1
	slave=""
	broker=""
	brokerc=""
	metrics=""
	brokers=""
	drain=""
	case "$file" in
	docker-compose-2m2s.yml)
		# Brokers advertise their container addresses (reachable from the
		# host on Linux); the test drives broker-a and looks for its slave.
		brokerc=$(svc broker-a)
		broker=$(cip "$brokerc"):10911
		slave=$(cip "$(svc broker-a-s)"):10911
		;;
	docker-compose-controller.yml)
		for b in broker-n0 broker-n1 broker-n2; do
			c=$(svc $b)
			brokers="$brokers $(cip "$c"):10911=$c"
		done
		;;
	*)
		brokerc=$(svc broker)
		broker=$hostip:$BROKER_PORT
		metrics=127.0.0.1:$BROKER_METRICS_PORT
		drain=1
		;;
	esac
	echo "test.sh: $file up and healthy in $(($(date +%s) - t0))s (project $name, namesrv 127.0.0.1:$NAMESRV_PORT, broker ${broker:-$brokers})"
}

# wait_healthy: every container of the project with a health check reports
# healthy, and the one-shot init exited 0 (compose only started the others
# after it did), within 120 s.
wait_healthy() {
	i=0
	while :; do
		bad=""
		for c in $(cd "$proj" && docker-compose -p "$name" -f "$file" ps -q); do
			st=$(docker inspect -f '{{.Name}} {{.State.Status}} {{if .State.Health}}{{.State.Health.Status}}{{else}}none{{end}} {{.State.ExitCode}}' "$c")
			case "$st" in
			*" running healthy "* | *_init_*" exited none 0") ;;
			*) bad="$bad; $st" ;;
			esac
		done
		[ -n "$bad" ] || return 0
		i=$((i + 1))
		[ $i -le 120 ] || { echo "test.sh: not healthy after 120 s:$bad" >&2; return 1; }
		sleep 1
	done
}

# down: the logs when something failed, then containers, networks, volumes.
down() {
	[ -n "${proj:-}" ] || return 0
	if [ "$status" != 0 ]; then
		(cd "$proj" && docker-compose -p "$name" -f "$file" logs --no-color --tail 40) >&2 2>&1 || true
	fi
	(cd "$proj" && docker-compose -p "$name" -f "$file" down -v --remove-orphans) >/dev/null 2>&1 || true
	proj=""
}

# The Java clients' tests need Maven (compat-tests/java, java-grpc).
java=""
if command -v mvn >/dev/null 2>&1; then
	java=1
else
	echo "test.sh: NO mvn: TestDockerJava and TestDockerJava5x are skipped" >&2
fi

# gotest TESTS: runs compat-tests tests (a regexp alternation) against the
# project that is up.
gotest() {
	(cd "$root/compat-tests" && ROCKETGO_DOCKER=1 ROCKETGO_JAVA=$java ROCKETGO_BIN_DIR=$work/lib \
		ROCKETGO_DOCKER_NS=127.0.0.1:$NAMESRV_PORT ROCKETGO_DOCKER_BROKER=$broker \
		ROCKETGO_DOCKER_BROKER_CONTAINER=$brokerc ROCKETGO_DOCKER_PROXY=127.0.0.1:$PROXY_GRPC_PORT \
		ROCKETGO_DOCKER_SLAVE=$slave ROCKETGO_DOCKER_METRICS=$metrics ROCKETGO_DOCKER_BROKER_CONTAINERS="$brokers" \
		ROCKETGO_DOCKER_DRAIN=$drain \
		GOWORK=off go test -count=1 -v -run "^($1)\$" -timeout 10m .)
}

# incontainer TEST: the same test from a container on the compose network
# (a static test binary on the base image), addressing the name server and
# the proxy by their container addresses, the broker by what it advertises.
incontainer() {
	nsc=$(svc namesrv)
	proxyc=$(svc proxy)
	proxyaddr=""
	[ -z "$proxyc" ] || proxyaddr=$(cip "$proxyc"):8081
	docker run --rm --network "${name}_default" -v "$work/lib:/rocketgo/bin:ro" \
		-v "$work/compat.test:/rocketgo/compat.test:ro" -e ROCKETGO_DOCKER=1 -e ROCKETGO_BIN_DIR=/rocketgo/bin \
		-e "ROCKETGO_DOCKER_NS=$(cip "$nsc"):9876" -e "ROCKETGO_DOCKER_BROKER=$broker" \
		-e "ROCKETGO_DOCKER_PROXY=$proxyaddr" -e "ROCKETGO_DOCKER_SLAVE=$slave" -e TMPDIR=/tmp -e HOME=/tmp \
		rocketgo-base:bookworm /rocketgo/compat.test -test.count=1 -test.v -test.run "^$1\$" -test.timeout 10m
}

# The test binary for the runs from a container: static, like the servers.
(cd "$root/compat-tests" && CGO_ENABLED=0 GOWORK=off go test -c -o "$work/compat.test" .)

status=0
proj=""
upn=0
trap 'down; rm -rf "$work"' EXIT
trap 'exit 1' INT TERM

# FILE:TESTS: TESTS run from the host; the first of them from a container too.
for scenario in docker-compose.yml:'TestDocker|TestDockerJava' docker-compose-5.x.yml:'TestDocker5x|TestDockerJava5x' \
	docker-compose-2m2s.yml:TestDocker docker-compose-controller.yml:TestDockerController; do
	tests=${scenario#*:}
	up "${scenario%%:*}" || { status=1; break; }
	gotest "$tests" || status=1
	echo "test.sh: ${tests%%|*} from a container on the compose network"
	incontainer "${tests%%|*}" || status=1
	down
	[ "$status" = 0 ] || break
done
if [ "$status" = 0 ]; then
	echo "test.sh: PASS"
else
	echo "test.sh: FAIL" >&2
fi
exit "$status"
