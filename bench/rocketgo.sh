#!/usr/bin/env bash
# Start or stop a rocketgo name server + broker pair for benchmarks.
#
#   bench/rocketgo.sh start DIR NS_PORT BROKER_PORT [FLUSH_TYPE] [extra broker.conf lines...]
#   bench/rocketgo.sh stop  DIR
#   bench/rocketgo.sh heap  DIR   -> the broker's live heap in bytes after a GC
#   bench/rocketgo.sh proxy DIR NS_PORT GRPC_PORT   -> bin/mqproxy in front of it
#
# start writes DIR/{namesrv,broker}.conf, launches bin/mqnamesrv and
# bin/mqbroker (logs DIR/*.log, store DIR/store), records their pids in
# DIR/{namesrv,broker}.pid and returns once the ports accept connections.
# It prints "broker_pid=<pid> launched_ns=<unix ns>" (the moment the broker
# was launched, for start-up time measurements). With BENCH_TOPICS_JSON set,
# that file becomes the broker's config/topics.json before it starts (a
# broker holding many topics without creating them one by one).
# This is the contract bench/compare.sh expects from any start script
# (the Apache reference harness gets a wrapper with the same interface).
# heap is optional in that contract (the lite rows use it): the broker
# serves pprof on a port of its own (DIR/pprof.addr), and heap reads
# HeapAlloc there after the collection pprof's gc=1 runs.
# proxy is optional too (the pop rows use it): it starts the system's gRPC
# proxy in cluster mode against the name server on NS_PORT (here
# bin/mqproxy, DIR/mqproxy.json, log DIR/proxy.log), records its pid in
# DIR/proxy.pid, returns once GRPC_PORT accepts connections and prints
# "proxy_pid=<pid>"; stop stops it too.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
BIN=${ROCKETGO_BIN_DIR:-$ROOT/bin}


case "${1:-}" in
start)
	dir=$2 ns=$3 bp=$4 flush=${5:-ASYNC_FLUSH}
	shift 4; [ $# -gt 0 ] && shift
	mkdir -p "$dir/store/config"
	if [ -n "${BENCH_TOPICS_JSON:-}" ]; then cp "$BENCH_TOPICS_JSON" "$dir/store/config/topics.json"; fi
	printf "listenPort=%s\nkvConfigPath=%s\n" "$ns" "$dir/kvConfig.json" >"$dir/namesrv.conf"
	{
		echo "brokerClusterName=BenchCluster"
		echo "brokerName=broker-bench"
		echo "brokerId=0"
		echo "listenPort=$bp"
		echo "namesrvAddr=127.0.0.1:$ns"
		echo "brokerIP1=127.0.0.1"
		echo "storePathRootDir=$dir/store"
		echo "flushDiskType=$flush"
		echo "autoCreateTopicEnable=true"
		for l in "$@"; do echo "$l"; done
	} >"$dir/broker.conf"
	"$BIN/mqnamesrv" -c "$dir/namesrv.conf" >>"$dir/namesrv.log" 2>&1 &
	echo $! >"$dir/namesrv.pid"
	wait_port "$ns" 15 "$(cat "$dir/namesrv.pid")"
	echo "${ROCKETGO_PPROF:-127.0.0.1:$(pick_ports 1)}" >"$dir/pprof.addr"
	launched=$(date +%s%N)
	ROCKETGO_PPROF=$(cat "$dir/pprof.addr") "$BIN/mqbroker" -c "$dir/broker.conf" -n "127.0.0.1:$ns" >>"$dir/broker.log" 2>&1 &
	echo $! >"$dir/broker.pid"
	wait_port "$bp" 60 "$(cat "$dir/broker.pid")"
	echo "broker_pid=$(cat "$dir/broker.pid") launched_ns=$launched"
	;;
proxy)
	dir=$2 ns=$3 gp=$4
	printf '{"rocketMQClusterName":"BenchCluster","namesrvAddr":"127.0.0.1:%s","grpcServerPort":%s}\n' "$ns" "$gp" >"$dir/mqproxy.json"
	"$BIN/mqproxy" -pc "$dir/mqproxy.json" >>"$dir/proxy.log" 2>&1 &
	echo $! >"$dir/proxy.pid"
	wait_port "$gp" 30 "$(cat "$dir/proxy.pid")"
	echo "proxy_pid=$(cat "$dir/proxy.pid")"
	;;
heap)
	curl -sf "http://$(cat "$2/pprof.addr")/debug/pprof/heap?debug=1&gc=1" | sed -n 's/^# HeapAlloc = \([0-9]*\).*/\1/p'
	;;
stop)
	dir=$2
	for p in proxy broker namesrv; do
		[ -f "$dir/$p.pid" ] || continue
		pid=$(cat "$dir/$p.pid")
		if kill -TERM "$pid" 2>/dev/null; then
			for _ in $(seq 100); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
			kill -KILL "$pid" 2>/dev/null || true
		fi
		rm -f "$dir/$p.pid"
	done
	;;
*)
	echo "usage: $0 start DIR NS_PORT BROKER_PORT [FLUSH_TYPE] [conf lines] | stop DIR | heap DIR | proxy DIR NS_PORT GRPC_PORT" >&2
	exit 2
	;;
esac
