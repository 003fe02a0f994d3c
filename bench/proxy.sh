#!/usr/bin/env bash
# gRPC proxy benchmark rows on this machine, loopback:
#
#   bench/proxy.sh [-q] [-r REPS] [-d SECONDS] [-W SECONDS] [-c CONNS] [-w WINDOW] [-o DIR] [PATH...]
#
# mqbench grpc-produce (1 KiB, one message per SendMessage as the 5.x SDKs
# send, CONNS connections x WINDOW calls in flight, plaintext then TLS) to
# one rocketgo broker (ASYNC_FLUSH, fresh store per repetition) through
# each PATH (default all, the order rotating per repetition):
#   mqproxy   rocketgo's proxy, cluster mode (bin/mqproxy)
#   local     the broker's own gRPC (mqbroker --enable-proxy)
#   apache    Apache's proxy, cluster mode (compat-tests/reference/run.sh proxy: 5.5.0)
# and, for scale, the broker direct over Remoting (mqbench produce, same
# size, connections and window). Only the proxy under test runs during its
# rows. Medians per row go to OUT/summary.txt, raw rows to OUT/results.tsv.
# Run it when nothing else runs (make bench-proxy).
#
# Options: -r REPS (default 3), -d SECONDS per row (default 10), -W
# SECONDS of warm-up before each row (default 5: the JVM compiles its hot
# paths), -c CONNS (4), -w WINDOW (16), -q quick: -r 1 -d 3 -W 2.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
BIN=${ROCKETGO_BIN_DIR:-$ROOT/bin}
REF=${APACHE_REFERENCE:-$ROOT/compat-tests/reference/run.sh}
D=10 WARM=5 REPS=3 CONNS=4 WINDOW=16 OUT=""
while getopts "r:d:W:c:w:o:q" opt; do
	case $opt in
	r) REPS=$OPTARG ;; d) D=$OPTARG ;; W) WARM=$OPTARG ;; c) CONNS=$OPTARG ;; w) WINDOW=$OPTARG ;; o) OUT=$OPTARG ;;
	q) REPS=1 D=3 WARM=2 ;;
	*) sed -n '2,21p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
PATHS=("$@")
[ ${#PATHS[@]} -gt 0 ] || PATHS=(mqproxy local apache)
OUT=${OUT:-$ROOT/bench/results/proxy-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
RES=$OUT/results.tsv
: >"$RES"
MQB=$BIN/mqbench
[ -x "$MQB" ] || { echo "proxy: $MQB missing (make build)" >&2; exit 2; }

log() { echo "[$(date +%T)] $*" >&2; }
field() { sed -n "s/^SUMMARY role=send .* $2=\([0-9.]*\).*/\1/p" "$1" | tail -1; }

PIDS=()
stop_pid() {
	kill -TERM "$1" 2>/dev/null || true
	for _ in $(seq 300); do kill -0 "$1" 2>/dev/null || return 0; sleep 0.1; done
	kill -KILL "$1" 2>/dev/null || true
}
stop_all() {
	local pid
	for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
	PIDS=()
}
trap stop_all EXIT

# row NAME PROXYADDR: grpc-produce plaintext and TLS through PROXYADDR.
row() {
	local name=$1 addr=$2 tls f
	for tls in false true; do
		f=$OUT/$name-tls$tls-$rep.txt
		"$MQB" grpc-produce -proxy "$addr" -tls="$tls" -t "$TOPIC" -c "$CONNS" -w "$WINDOW" -s 1024 -d "${WARM}s" >/dev/null 2>&1 || true
		"$MQB" grpc-produce -proxy "$addr" -tls="$tls" -t "$TOPIC" -c "$CONNS" -w "$WINDOW" -s 1024 -d "${D}s" >"$f" 2>&1 || true
		printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$name" "$tls" "$rep" "$(field "$f" tps)" "$(field "$f" p50_ms)" "$(field "$f" p99_ms)" >>"$RES"
		log "$name tls=$tls rep=$rep: tps=$(field "$f" tps) p50=$(field "$f" p50_ms) p99=$(field "$f" p99_ms)"
	done
}

for rep in $(seq "$REPS"); do
	dir=$OUT/rep$rep
	mkdir -p "$dir/store"
	read -r ns bp gp mp ap ar < <(pick_ports 6)
	TOPIC=ProxyBench
	printf "listenPort=%s\nkvConfigPath=%s\n" "$ns" "$dir/kvConfig.json" >"$dir/namesrv.conf"
	cat >"$dir/broker.conf" <<CONF
brokerClusterName=BenchCluster
brokerName=broker-bench
brokerId=0
listenPort=$bp
namesrvAddr=127.0.0.1:$ns
brokerIP1=127.0.0.1
storePathRootDir=$dir/store
flushDiskType=ASYNC_FLUSH
autoCreateTopicEnable=true
CONF
	printf '{"rocketMQClusterName":"BenchCluster","namesrvAddr":"127.0.0.1:%s","grpcServerPort":%s}\n' "$ns" "$gp" >"$dir/local-proxy.json"
	printf '{"rocketMQClusterName":"BenchCluster","namesrvAddr":"127.0.0.1:%s","grpcServerPort":%s}\n' "$ns" "$mp" >"$dir/mqproxy.json"
	"$BIN/mqnamesrv" -c "$dir/namesrv.conf" >>"$dir/namesrv.log" 2>&1 &
	PIDS+=($!)
	wait_port "$ns" 15
	"$BIN/mqbroker" -c "$dir/broker.conf" -n "127.0.0.1:$ns" --enable-proxy -pc "$dir/local-proxy.json" >>"$dir/broker.log" 2>&1 &
	PIDS+=($!)
	wait_port "$bp" 15
	wait_port "$gp" 15
	"$MQB" produce -n "127.0.0.1:$ns" -t "$TOPIC" -create-topic -c 1 -w 1 -s 1024 -count 1 >/dev/null
	sleep 1

	f=$OUT/remoting-$rep.txt
	"$MQB" produce -n "127.0.0.1:$ns" -t "$TOPIC" -c "$CONNS" -w "$WINDOW" -s 1024 -d "${D}s" >"$f" 2>&1 || true
	printf '%s\t%s\t%s\t%s\t%s\t%s\n' remoting false "$rep" "$(field "$f" tps)" "$(field "$f" p50_ms)" "$(field "$f" p99_ms)" >>"$RES"
	log "remoting rep=$rep: tps=$(field "$f" tps) p99=$(field "$f" p99_ms)"

	n=${#PATHS[@]}
	for i in $(seq 0 $((n - 1))); do
		p=${PATHS[$(((i + rep - 1) % n))]}
		case $p in
		local) row local "127.0.0.1:$gp" ;;
		mqproxy)
			"$BIN/mqproxy" -pc "$dir/mqproxy.json" >>"$dir/mqproxy.log" 2>&1 &
			pid=$!
			wait_port "$mp" 15
			row mqproxy "127.0.0.1:$mp"
			stop_pid "$pid"
			;;
		apache)
			mkdir -p "$dir/apache-proxy"
			"$REF" proxy "$ap" "$ar" "127.0.0.1:$ns" "$dir/apache-proxy" BenchCluster >>"$dir/apache-proxy.log" 2>&1 &
			pid=$!
			wait_port "$ap" 120
			sleep 3
			row apache "127.0.0.1:$ap"
			stop_pid "$pid"
			;;
		*) echo "unknown path $p" >&2; exit 2 ;;
		esac
	done
	stop_all
	rm -rf "$dir/store"
done

python3 - "$RES" >"$OUT/summary.txt" <<'PY'
import collections, statistics, sys
rows = collections.defaultdict(list)
for line in open(sys.argv[1]):
    f = line.rstrip("\n").split("\t")
    if len(f) == 6 and f[3]:
        rows[(f[0], f[1])].append((float(f[3]), float(f[4]), float(f[5])))
print("| path | TLS | TPS | p50 ms | p99 ms | reps |")
print("|---|---|---:|---:|---:|---:|")
for (name, tls), v in sorted(rows.items()):
    med = lambda i: statistics.median(x[i] for x in v)
    print(f"| {name} | {'yes' if tls == 'true' else 'no'} | {med(0):,.0f} | {med(1):.2f} | {med(2):.2f} | {len(v)} |")
PY
cat "$OUT/summary.txt"
echo "raw: $RES" >&2
