#!/usr/bin/env bash
# Start/stop adapter for the Apache RocketMQ reference
# (compat-tests/reference/run.sh), with the same contract as bench/rocketgo.sh:
#
#   bench/apache.sh start DIR NS_PORT BROKER_PORT [FLUSH_TYPE] [extra broker.properties lines...]
#   bench/apache.sh stop  DIR
#   bench/apache.sh heap  DIR   -> the broker's used Java heap in bytes after a full GC (jcmd)
#   bench/apache.sh proxy DIR NS_PORT GRPC_PORT   -> Apache's gRPC proxy (run.sh proxy) in front of it
#
# The name server is started through run.sh. The broker is started with
# run.sh's classpath and JVM flags but with a broker.properties written here,
# because run.sh pins flushDiskType=ASYNC_FLUSH and SYNC_FLUSH is measured too.
# Keep the JVM flags below in step with run.sh java_opts.
# proxy starts Apache's proxy in cluster mode through run.sh proxy (the
# version run.sh's pom.xml pins, 5.5.0, or ROCKETGO_REFERENCE_VERSION; its
# JVM flags, 256 MB of heap; its Remoting port a free one picked here), in
# DIR/proxy, log DIR/proxy.log, pid DIR/proxy.pid; it returns 3 s after
# GRPC_PORT accepts connections (as bench/proxy.sh: the port opens before
# the proxy has settled). stop stops it too.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
REF=${APACHE_REFERENCE:-$ROOT/compat-tests/reference/run.sh}


case "${1:-}" in
start)
	[ -x "$REF" ] || { echo "no Apache reference harness at $REF" >&2; exit 3; }
	dir=$2 ns=$3 bp=$4 flush=${5:-ASYNC_FLUSH}
	shift 4; [ $# -gt 0 ] && shift
	mkdir -p "$dir/namesrv" "$dir/broker/store/config"
	if [ -n "${BENCH_TOPICS_JSON:-}" ]; then cp "$BENCH_TOPICS_JSON" "$dir/broker/store/config/topics.json"; fi
	"$REF" namesrv "$ns" "$dir/namesrv" >>"$dir/namesrv.log" 2>&1 &
	echo $! >"$dir/namesrv.pid"
	wait_port "$ns" 60 "$(cat "$dir/namesrv.pid")"
	cp=$("$REF" classpath)
	b=$dir/broker
	cat >"$b/broker.properties" <<CONF
brokerClusterName=BenchCluster
brokerName=broker-bench
brokerId=0
listenPort=$bp
namesrvAddr=127.0.0.1:$ns
brokerIP1=127.0.0.1
storePathRootDir=$b/store
storePathCommitLog=$b/store/commitlog
flushDiskType=$flush
autoCreateTopicEnable=true
diskMaxUsedSpaceRatio=99
timerWheelEnable=false
CONF
	for l in "$@"; do echo "$l"; done >>"$b/broker.properties"
	launched=$(date +%s%N)
	ROCKETMQ_HOME=$b java -server -Xms256m -Xmx256m -Xmn128m -XX:MaxDirectMemorySize=256m \
		-XX:+UseG1GC -XX:G1HeapRegionSize=16m -XX:G1ReservePercent=25 \
		-XX:InitiatingHeapOccupancyPercent=30 -XX:SoftRefLRUPolicyMSPerMB=0 \
		-XX:-OmitStackTraceInFastThrow -XX:-UseLargePages \
		--add-opens java.base/java.nio=ALL-UNNAMED --add-opens java.base/sun.nio.ch=ALL-UNNAMED \
		--add-exports java.base/jdk.internal.ref=ALL-UNNAMED \
		-Duser.home="$b" -Drocketmq.home.dir="$b" -Djava.io.tmpdir="$b" \
		-cp "$cp" org.apache.rocketmq.broker.BrokerStartup -c "$b/broker.properties" -n "127.0.0.1:$ns" \
		>>"$dir/broker.log" 2>&1 &
	echo $! >"$dir/broker.pid"
	wait_port "$bp" 60 "$(cat "$dir/broker.pid")"
	echo "broker_pid=$(cat "$dir/broker.pid") launched_ns=$launched"
	;;
proxy)
	[ -x "$REF" ] || { echo "no Apache reference harness at $REF" >&2; exit 3; }
	dir=$2 ns=$3 gp=$4
	mkdir -p "$dir/proxy"
	"$REF" proxy "$gp" "$(pick_ports 1)" "127.0.0.1:$ns" "$dir/proxy" BenchCluster >>"$dir/proxy.log" 2>&1 &
	echo $! >"$dir/proxy.pid"
	wait_port "$gp" 120 "$(cat "$dir/proxy.pid")"
	sleep 3
	echo "proxy_pid=$(cat "$dir/proxy.pid")"
	;;
heap)
	pid=$(cat "$2/broker.pid")
	jcmd "$pid" GC.run >/dev/null
	# "garbage-first heap   total 262144K, used 81234K"
	jcmd "$pid" GC.heap_info | sed -n 's/.* heap .*used \([0-9]*\)K.*/\1/p' | head -1 | awk '{print $1 * 1024}'
	;;
stop)
	exec "$(dirname "$0")/rocketgo.sh" stop "$2"
	;;
*)
	echo "usage: $0 start DIR NS_PORT BROKER_PORT [FLUSH_TYPE] | stop DIR | heap DIR | proxy DIR NS_PORT GRPC_PORT" >&2
	exit 2
	;;
esac
