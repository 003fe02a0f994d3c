#!/bin/sh
# bench.sh is make bench-docker: rocketgo's image against an image built the
# way apache/rocketmq:5.3.3 is, on the same machine and engine. It is not in
# make test (minutes, and a JVM or two).
#
# The Apache image is built here, with no registry, as rocketmq-docker's
# image-build/Dockerfile-ubuntu lays it out: ROCKETMQ_HOME
# /home/rocketmq/rocketmq-5.3.3 with bin/ (upstream's distribution/bin
# scripts, read from the Apache mirror), conf/ and lib/ (the RocketMQ 5.3.3
# jars and their dependencies from Maven Central: namesrv, broker, proxy, as
# compat-tests/reference resolves them), user rocketmq 3000, the same
# entrypoint contract. Differences, all in its favour on size: Debian
# bookworm minbase with Debian's openjdk-17-jre-headless instead of Ubuntu
# with eclipse-temurin:8-jdk (a JDK), and no tools/controller jars.
#
# Measured, for each image: its size; start-up, from `docker run` of a name
# server and a broker (on a user network) to the name server answering a
# request (mqadmin topicList) and to the broker registered and accepting a
# send (mqbench probe), RUNS times (best and median); the broker container's
# memory (docker stats) after start-up and after MESSAGES 1 KiB sends.
#
# Usage: docker/bench.sh              Env: RUNS (5), MESSAGES (10000),
#        APACHE_MIRROR (the bare apache/rocketmq git, tag rocketmq-all-5.3.3)
set -eu

here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/.." && pwd)
export TMPDIR=${TMPDIR:-/tmp/rocketgo-docker-bench}
mkdir -p "$TMPDIR"
CACHE=${ROCKETGO_DOCKER_CACHE:-/var/cache/rocketgo-docker}
RUNS=${RUNS:-5}
MESSAGES=${MESSAGES:-10000}
APACHE_MIRROR=${APACHE_MIRROR:-/work/.mirror/apache+rocketmq/repo}
TAG=rocketgo:5.3.3
# apache/rocketmq's image replaces upstream's runserver.sh / runbroker.sh
# (4 GB and 8 GB heaps, the broker's pre-touched) with rocketmq-docker's
# *-customize.sh: name server -Xms1g -Xmx1g -Xmn512m, broker -Xms2g -Xmx2g
# -Xmn1g (still pre-touched). JAVA_OPT_EXT comes last on upstream's java
# command line, so these give the published image's heaps; rocketgo's
# scripts ignore it (one log line).
NS_HEAP=${NS_HEAP:--Xms1g -Xmx1g -Xmn512m}
BROKER_HEAP=${BROKER_HEAP:--Xms2g -Xmx2g -Xmn1g -XX:MaxDirectMemorySize=1g}
APACHE=rocketgo-apache-ref:5.3.3
JREBASE=rocketgo-base-jre17:bookworm

work=$(mktemp -d "$TMPDIR/bench.XXXXXX")
net=rgbench$$
cleanup() {
	docker rm -f "$net-ns" "$net-broker" >/dev/null 2>&1 || true
	docker network rm "$net" >/dev/null 2>&1 || true
	rm -rf "$work"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# The host-side tools: mqadmin (name server probe) and mqbench (send probe,
# load).
(cd "$root" && CGO_ENABLED=0 GOWORK=off go build -o "$work/" ./cmd/mqadmin ./cmd/mqbench)

"$here/build.sh" "$TAG"

# jre_base: Debian bookworm minbase plus openjdk-17-jre-headless, made like
# base.sh's (debootstrap, cached tarball, docker import).
jre_base() {
	docker image inspect "$JREBASE" >/dev/null 2>&1 && return 0
	tarball=$CACHE/bookworm-jre17.tar
	if [ ! -s "$tarball" ]; then
		mkdir -p "$CACHE"
		r=$(mktemp -d "$CACHE/jre.XXXXXX")
		echo "bench.sh: debootstrap bookworm minbase + openjdk-17-jre-headless (minutes, once)" >&2
		debootstrap --variant=minbase --include=openjdk-17-jre-headless bookworm "$r" \
			"${DEBIAN_MIRROR:-http://deb.debian.org/debian}" >"$CACHE/debootstrap-jre.log" 2>&1
		rm -rf "$r"/var/cache/apt/archives/*.deb "$r"/var/lib/apt/lists/* \
			"$r"/usr/share/doc/* "$r"/usr/share/man/* "$r"/usr/share/locale/*
		tar -C "$r" -cf "$tarball.tmp" . && mv "$tarball.tmp" "$tarball"
		rm -rf "$r"
	fi
	docker import -c 'CMD ["/bin/sh"]' "$tarball" "$JREBASE" >/dev/null
}

# apache_image: the apache/rocketmq:5.3.3 equivalent (see the top).
apache_image() {
	docker image inspect "$APACHE" >/dev/null 2>&1 && return 0
	jre_base
	ctx=$work/apache
	mkdir -p "$ctx/bin" "$ctx/conf" "$ctx/lib"
	for f in mqnamesrv mqbroker mqproxy mqadmin mqshutdown runserver.sh runbroker.sh tools.sh; do
		git -C "$APACHE_MIRROR" show "rocketmq-all-5.3.3:distribution/bin/$f" >"$ctx/bin/$f"
	done
	for f in broker.conf rmq-proxy.json; do
		git -C "$APACHE_MIRROR" show "rocketmq-all-5.3.3:distribution/conf/$f" >"$ctx/conf/$f"
	done
	# The image's entrypoint contract (rocketmq-docker's docker-entrypoint.sh).
	cat >"$ctx/bin/docker-entrypoint.sh" <<'EOF'
#!/bin/sh
set -e
case "${NODE_ROLE:-$1}" in
nameserver) [ -n "${NODE_ROLE:-}" ] || shift; exec ./mqnamesrv "$@" ;;
broker) [ -n "${NODE_ROLE:-}" ] || shift; exec ./mqbroker "$@" ;;
*) exec "$@" ;;
esac
EOF
	"$root/compat-tests/reference/run.sh" classpath | tr ':' '\n' | while read -r j; do
		[ -f "$j" ] && cp "$j" "$ctx/lib/"
	done
	cat >"$ctx/Dockerfile" <<EOF
FROM $JREBASE
ENV ROCKETMQ_VERSION=5.3.3 ROCKETMQ_HOME=/home/rocketmq/rocketmq-5.3.3 \\
    JAVA_HOME=/usr/lib/jvm/java-17-openjdk-amd64
EXPOSE 9876 10909 10911 10912
RUN groupadd -g 3000 rocketmq && useradd -l -u 3000 -g 3000 -m -s /bin/sh rocketmq \\
 && ln -s /usr/lib/jvm/java-17-openjdk-\$(dpkg --print-architecture) /usr/java
COPY --chown=3000:3000 . /home/rocketmq/rocketmq-5.3.3/
RUN chmod -R a+x /home/rocketmq/rocketmq-5.3.3/bin && rm /home/rocketmq/rocketmq-5.3.3/Dockerfile
USER rocketmq
WORKDIR /home/rocketmq/rocketmq-5.3.3/bin
ENTRYPOINT ["./docker-entrypoint.sh"]
CMD ["dummy"]
EOF
	docker build -q -t "$APACHE" "$ctx" >/dev/null
}
apache_image

mb() { docker image inspect -f '{{.Size}}' "$1" | awk '{printf "%.1f", $1/1e6}'; }
now_ms() { echo $(($(date +%s%N) / 1000000)); }
cip() { docker inspect -f '{{range .NetworkSettings.Networks}}{{.IPAddress}}{{end}}' "$1"; }
mem() { docker stats --no-stream --format '{{.MemUsage}}' "$1" | cut -d/ -f1 | tr -d ' '; }
# stats "v1 v2 ...": best and median (lower median for an even count).
stats() {
	echo "$1" | tr ' ' '\n' | grep . | sort -n | awk '{v[NR]=$1} END {printf "best %d ms, median %d ms", v[1], v[int((NR+1)/2)]}'
}

# run_once IMAGE: one start-up (name server and broker started together)
# and, for the last run, the memory figures. Prints "ns_ms send_ms".
run_once() {
	image=$1
	docker network create "$net" >/dev/null
	t0=$(now_ms)
	docker run -d --name "$net-ns" --network "$net" -e JAVA_OPT_EXT="$NS_HEAP" "$image" sh mqnamesrv >/dev/null
	docker run -d --name "$net-broker" --network "$net" -e NAMESRV_ADDR="$net-ns:9876" -e JAVA_OPT_EXT="$BROKER_HEAP" \
		"$image" sh mqbroker -n "$net-ns:9876" >/dev/null
	ns=$(cip "$net-ns"):9876
	until "$work/mqadmin" topicList -n "$ns" >/dev/null 2>&1; do
		[ $(($(now_ms) - t0)) -lt 120000 ] || { docker logs "$net-ns" >&2; return 1; }
		sleep 0.02
	done
	t_ns=$(($(now_ms) - t0))
	out=$("$work/mqbench" probe -n "$ns" -t BenchProbe -create-topic -since "$((t0 * 1000000))" -timeout 120s) ||
		{ docker logs "$net-broker" 2>&1 | tail -20 >&2; return 1; }
	t_send=$(echo "$out" | sed -n 's/.*first_send_ms=\([0-9]*\).*/\1/p')
	echo "$t_ns $t_send"
}

teardown() {
	docker rm -f "$net-ns" "$net-broker" >/dev/null 2>&1 || true
	docker network rm "$net" >/dev/null 2>&1 || true
}

measure() { # measure LABEL IMAGE
	nss="" sends=""
	i=0
	while [ $i -lt "$RUNS" ]; do
		i=$((i + 1))
		r=$(run_once "$2")
		nss="$nss ${r% *}" sends="$sends ${r#* }"
		if [ $i -lt "$RUNS" ]; then teardown; fi
	done
	sleep 5 # let the start-up settle before reading memory
	ns=$(cip "$net-ns"):9876
	m_start=$(mem "$net-broker")
	"$work/mqbench" produce -n "$ns" -t BenchLoad -create-topic -c 2 -w 16 -s 1024 -count "$MESSAGES" \
		>"$work/load-$1.txt" 2>&1 || tail -5 "$work/load-$1.txt" >&2
	sleep 2
	m_load=$(mem "$net-broker")
	teardown
	echo "| $1 | $(mb "$2") MB | $(stats "$nss") | $(stats "$sends") | $m_start | $m_load |"
	echo "bench.sh: $1 runs: name server$nss; first send$sends" >&2
}

echo "| image | size | docker run → name server answering | docker run → broker registered, send accepted | broker memory after start | after $MESSAGES × 1 KiB |"
echo "|---|---|---|---|---|---|"
measure rocketgo "$TAG"
measure "Apache 5.3.3 (built here)" "$APACHE"
