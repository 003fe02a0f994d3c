#!/usr/bin/env bash
# Replication benchmark rows, for rocketgo and for the Apache
# reference (compat-tests/reference/run.sh, 5.3.3) on this machine, loopback:
#
#   bench/replication.sh [-q] [-r REPS] [-m MB] [-d SECONDS] [-R RATE] [-o DIR] [SYSTEM...]
#
# SYSTEM is rocketgo or apache (default both, alternating order per rep).
# Per repetition and system, each with fresh stores:
#   catch-up   an ASYNC_MASTER holding MB MiB of 1 KiB messages, then a slave
#              with an empty store started: MB/s from the first byte on the
#              slave to its commit log end equal to the master's (runtime info
#              polled every 100 ms), the wall time from the slave's launch,
#              and its time to the first byte;
#   ASYNC / SYNC_MASTER with a connected slave: send TPS of 1 KiB closed-loop
#              (c=4 w=32) and send p50/p99 at a fixed RATE (mqbench produce).
#              Apache's SYNC_MASTER waits for a slave only with
#              inSyncReplicas=2 (5.x), which is set for it.
# Medians per metric and system go to OUT/summary.txt, raw rows to
# OUT/results.tsv. Run it when nothing else runs (make bench does).
#
# Options: -m MB (default 1024), -d SECONDS per send row (default 15),
# -R RATE msgs/s for the p99 rows (default 5000), -r REPS (default 3),
# -q quick: -m 128 -d 3 -r 1.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ROCKETGO_BIN_DIR:-$ROOT/bin}
REF=${APACHE_REFERENCE:-$ROOT/compat-tests/reference/run.sh}
MB=1024 D=15 RATE=5000 REPS=3 OUT=""
while getopts "m:d:R:r:o:q" opt; do
	case $opt in
	m) MB=$OPTARG ;; d) D=$OPTARG ;; R) RATE=$OPTARG ;; r) REPS=$OPTARG ;; o) OUT=$OPTARG ;;
	q) MB=128 D=3 REPS=1 ;;
	*) sed -n '2,22p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
SYSTEMS=("$@")
[ ${#SYSTEMS[@]} -gt 0 ] || SYSTEMS=(rocketgo apache)
OUT=${OUT:-$ROOT/bench/results/replication-$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
RES=$OUT/results.tsv
: >"$RES"
MQB=$BIN/mqbench
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
[ -x "$MQB" ] || { echo "replication: $MQB missing (make build)" >&2; exit 2; }

log() { echo "[$(date +%T)] $*" >&2; }
record() { printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$4" >>"$RES"; }
field() { sed -n "s/^SUMMARY role=$2 .* $3=\([0-9.]*\).*/\1/p" "$1" | tail -1; }

# commitlog_max PORT: the broker's commitLogMaxOffset (GET_BROKER_RUNTIME_INFO 28).
commitlog_max() {
	python3 - "$1" <<'PY'
import json, socket, struct, sys
s = socket.create_connection(("127.0.0.1", int(sys.argv[1])), timeout=5)
h = json.dumps({"code": 28, "language": "JAVA", "version": 409, "opaque": 1, "flag": 0, "extFields": {}}).encode()
s.sendall(struct.pack(">ii", 4 + len(h), len(h)) + h)
def read(n):
    b = b""
    while len(b) < n:
        c = s.recv(n - len(b))
        if not c:
            raise SystemExit("closed")
        b += c
    return b
total, = struct.unpack(">i", read(4))
data = read(total)
hl = struct.unpack(">i", data[:4])[0] & 0xFFFFFF
body = data[4 + hl:]
print(json.loads(body)["table"]["commitLogMaxOffset"])
PY
}

PIDS=()
stop_all() {
	local pid
	for pid in "${PIDS[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
	for pid in "${PIDS[@]}"; do
		for _ in $(seq 300); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
		kill -KILL "$pid" 2>/dev/null || true
	done
	PIDS=()
}
trap stop_all EXIT

# start_ns SYSTEM DIR PORT
start_ns() {
	local sys=$1 dir=$2 port=$3
	mkdir -p "$dir"
	if [ "$sys" = apache ]; then
		"$REF" namesrv "$port" "$dir" >>"$dir/namesrv.log" 2>&1 &
	else
		printf "listenPort=%s\nkvConfigPath=%s\n" "$port" "$dir/kvConfig.json" >"$dir/namesrv.conf"
		"$BIN/mqnamesrv" -c "$dir/namesrv.conf" >>"$dir/namesrv.log" 2>&1 &
	fi
	PIDS+=($!)
	wait_port "$port" 90
}

# start_broker SYSTEM DIR PORT NSPORT ID ROLE: a broker of broker-ha.
start_broker() {
	local sys=$1 dir=$2 port=$3 ns=$4 id=$5 role=$6
	mkdir -p "$dir/store"
	local props
	props="brokerClusterName=BenchCluster
brokerName=broker-ha
brokerId=$id
brokerRole=$role
listenPort=$port
haListenPort=$((port + 1))
namesrvAddr=127.0.0.1:$ns
brokerIP1=127.0.0.1
brokerIP2=127.0.0.1
storePathRootDir=$dir/store
storePathCommitLog=$dir/store/commitlog
flushDiskType=ASYNC_FLUSH
autoCreateTopicEnable=true
diskMaxUsedSpaceRatio=99
timerWheelEnable=false"
	if [ "$sys" = apache ]; then
		[ "$role" = SYNC_MASTER ] && props="$props
inSyncReplicas=2"
		echo "$props" >"$dir/broker.extra.properties"
		"$REF" broker "$port" "127.0.0.1:$ns" "$dir" BenchCluster >>"$dir/broker.log" 2>&1 &
	else
		echo "$props" >"$dir/broker.conf"
		"$BIN/mqbroker" -c "$dir/broker.conf" >>"$dir/broker.log" 2>&1 &
	fi
	PIDS+=($!)
	wait_port "$port" 90
}

# wait_equal MASTER_PORT SLAVE_PORT TIMEOUT_S [TRACE]: until the slave's commit log
# ends where the master's does (both polled every 10 ms on open
# connections); prints "FIRST_MS DONE_MS": when the slave first held bytes
# and when it was equal, in ms from the call.
wait_equal() {
	python3 - "$@" <<'PY'
import json, socket, struct, sys, time
mp, sp, timeout = int(sys.argv[1]), int(sys.argv[2]), float(sys.argv[3])
trace = open(sys.argv[4], "w") if len(sys.argv) > 4 else None  # ms master-max slave-max per poll
conns, opaque = {}, [0]
def cmax(port):
    s = conns.get(port)
    if s is None:
        s = conns[port] = socket.create_connection(("127.0.0.1", port), timeout=5)
    opaque[0] += 1
    h = json.dumps({"code": 28, "language": "JAVA", "version": 409, "opaque": opaque[0], "flag": 0, "extFields": {}}).encode()
    s.sendall(struct.pack(">ii", 4 + len(h), len(h)) + h)
    def read(n):
        b = b""
        while len(b) < n:
            c = s.recv(n - len(b))
            if not c:
                raise OSError("closed")
            b += c
        return b
    total, = struct.unpack(">i", read(4))
    data = read(total)
    hl = struct.unpack(">i", data[:4])[0] & 0xFFFFFF
    return int(json.loads(data[4 + hl:])["table"]["commitLogMaxOffset"])
t0, first, m, sl = time.monotonic(), -1, -1, -2
while time.monotonic() - t0 < timeout:
    try:
        m, sl = cmax(mp), cmax(sp)
    except (OSError, ValueError, KeyError):
        conns.clear()
        time.sleep(0.1)
        continue
    now = int((time.monotonic() - t0) * 1000)
    if trace:
        print(now, m, sl, file=trace)
    if first < 0 and sl > 0:
        first = now
    if m > 0 and m == sl:
        print(first if first >= 0 else now, now)
        sys.exit(0)
    time.sleep(0.01)
sys.exit(f"slave not caught up within {timeout} s (master {m}, slave {sl})")
PY
}

# run SYSTEM REP
run() {
	local sys=$1 rep=$2 base dir ns mp sp pre ms
	base=$(mktemp -d "${TMPDIR:-/tmp}/mqbench-repl-$sys.XXXXXX")
	pre=$OUT/$sys-r$rep
	# What else ran: the 1-minute load average when this system's rows began.
	record "$rep" "$sys" load1_at_start "$(cut -d' ' -f1 /proc/loadavg)"

	# catch-up: MB MiB on an ASYNC_MASTER, then a fresh slave.
	dir=$base/catchup
	read -r ns mp sp < <(pick_ports 3)
	log "$sys rep $rep: catch-up of $MB MiB"
	start_ns "$sys" "$dir/ns" "$ns"
	start_broker "$sys" "$dir/master" "$mp" "$ns" 0 ASYNC_MASTER
	"$MQB" produce -broker "127.0.0.1:$mp" -broker-name broker-ha -create-topic -q 8 -t bench_repl -c 4 -w 32 -s 1024 \
		-count $((MB * 1024)) >"$pre-fill.txt" 2>&1
	local bytes t0 up_ms first done
	bytes=$(commitlog_max "$mp")
	t0=$(date +%s%N)
	start_broker "$sys" "$dir/slave" "$sp" "$ns" 1 SLAVE
	up_ms=$(( ($(date +%s%N) - t0) / 1000000 ))
	read -r first done < <(wait_equal "$mp" "$sp" 900 "$pre-catchup-trace.txt")
	# The rate over the wall time from the slave's launch to equal ends
	# (start-up, learning the master's HA address from the name server and
	# Apache's first report after up to haSendHeartbeatInterval included),
	# and the rate after the slave's runtime info first shows a byte: not
	# comparable across systems, an Apache 5.3.3 slave answers
	# commitLogMaxOffset 0 until most of the log is in (trace: 0 until
	# 14.7 s, then 272 of 324 MB at once) — OUT/*-catchup-trace.txt has the
	# polls (ms, master max, slave max).
	record "$rep" "$sys" catchup_mb "$((bytes / 1048576))"
	record "$rep" "$sys" catchup_mbps_wall "$(python3 -c "print(round($bytes/1048576/(($up_ms+$done)/1000),1))")"
	record "$rep" "$sys" catchup_wall_s "$(python3 -c "print(round(($up_ms+$done)/1000,2))")"
	record "$rep" "$sys" catchup_mbps_after_first "$(python3 -c "print(round($bytes/1048576/(max($done-$first,1)/1000),1))")"
	record "$rep" "$sys" slave_first_byte_ms "$((up_ms + first))"
	stop_all
	rm -rf "$dir"

	for role in ASYNC_MASTER SYNC_MASTER; do
		dir=$base/$role
		read -r ns mp sp < <(pick_ports 3)
		log "$sys rep $rep: $role with a slave, send rows"
		start_ns "$sys" "$dir/ns" "$ns"
		start_broker "$sys" "$dir/master" "$mp" "$ns" 0 "$role"
		start_broker "$sys" "$dir/slave" "$sp" "$ns" 1 SLAVE
		# The slave connected and reporting: a send is acknowledged.
		"$MQB" produce -broker "127.0.0.1:$mp" -broker-name broker-ha -create-topic -q 8 -t bench_warm -c 4 -w 32 -s 1024 \
			-d 3s >"$pre-$role-warm.txt" 2>&1 || true
		wait_equal "$mp" "$sp" 120 >/dev/null
		"$MQB" produce -broker "127.0.0.1:$mp" -broker-name broker-ha -create-topic -q 8 -t bench_tps -c 4 -w 32 -s 1024 \
			-d "${D}s" >"$pre-$role-tps.txt" 2>&1
		record "$rep" "$sys" "send_tps_1024_${role}" "$(field "$pre-$role-tps.txt" send tps)"
		record "$rep" "$sys" "send_p99_ms_1024_closed_${role}" "$(field "$pre-$role-tps.txt" send p99_ms)"
		"$MQB" produce -broker "127.0.0.1:$mp" -broker-name broker-ha -create-topic -q 8 -t bench_rate -c 4 -w 32 -s 1024 \
			-rate "$RATE" -d "${D}s" >"$pre-$role-rate.txt" 2>&1
		record "$rep" "$sys" "send_p50_ms_1024_at_${RATE}_${role}" "$(field "$pre-$role-rate.txt" send p50_ms)"
		record "$rep" "$sys" "send_p99_ms_1024_at_${RATE}_${role}" "$(field "$pre-$role-rate.txt" send p99_ms)"
		stop_all
		rm -rf "$dir"
	done
	rm -rf "$base"
}

echo "# replication: catch-up $MB MiB of 1 KiB, send rows ${D}s (closed loop c=4 w=32; fixed $RATE/s), reps=$REPS, $(nproc) CPUs, loopback; load before: $(cut -d' ' -f1-3 /proc/loadavg)" | tee "$OUT/summary.txt"
for ((rep = 1; rep <= REPS; rep++)); do
	order=("${SYSTEMS[@]}")
	if ! ((rep % 2)) && [ ${#order[@]} -eq 2 ]; then order=("${order[1]}" "${order[0]}"); fi
	for s in "${order[@]}"; do run "$s" "$rep"; done
done

python3 - "$RES" "${SYSTEMS[@]}" <<'PY' | tee -a "$OUT/summary.txt"
import sys, statistics, collections
res, systems = sys.argv[1], sys.argv[2:]
vals, order = collections.defaultdict(list), []
for line in open(res):
    rep, s, m, v = line.rstrip("\n").split("\t")
    if m not in order:
        order.append(m)
    try:
        vals[(s, m)].append(float(v))
    except ValueError:
        pass
med = lambda k: statistics.median(vals[k]) if vals[k] else float("nan")
print(f"{'metric':40}" + "".join(f"{s:>14}" for s in systems) + (f"{'ratio':>10}" if len(systems) == 2 else ""))
for m in order:
    xs = [med((s, m)) for s in systems]
    line = f"{m:40}" + "".join(f"{x:14.2f}" for x in xs)
    if len(xs) == 2:
        line += f"{(xs[0] / xs[1]) if xs[1] else float('nan'):10.2f}"
    print(line)
PY
echo "results: $OUT" >&2
