#!/usr/bin/env bash
# Side-by-side benchmark of brokers with the same mqbench workloads.
#
#   bench/compare.sh [options] [NAME SCRIPT [NAME SCRIPT ...]]
#
# A system is a start/stop script with bench/rocketgo.sh's contract:
#   SCRIPT start DIR NS_PORT BROKER_PORT FLUSH_TYPE  -> prints "broker_pid=<pid> launched_ns=<ns>"
#   SCRIPT stop DIR
# (DIR/namesrv.pid and DIR/broker.pid hold the two processes; with
# BENCH_TOPICS_JSON set, that file is the broker's config/topics.json.)
# Systems come from -s (names of bench/NAME.sh: rocketgo, apache, rust) or
# as NAME SCRIPT pairs, e.g. "rocketgo bench/rocketgo.sh rocketgo2
# bench/rocketgo.sh" (A/A run to check the method and the noise). Default:
# rocketgo and apache (bench/apache.sh, which needs
# compat-tests/reference/run.sh; without it the script refuses unless the
# systems are given).
#
# For each repetition every system runs, in rotating order (ABC, BCA, ...),
# the row groups of -x, each start on a fresh store:
#   base (the default):
#     ASYNC_FLUSH start: start-up time to the first accepted send (mqbench
#       probe), idle RSS, a warm-up, send TPS at 128 B / 1 KiB / 4 KiB (RSS
#       sampled meanwhile), send p99 of 4 KiB at a fixed rate (-S), N stored
#       messages then consume catch-up TPS, and end-to-end latency at a fixed
#       rate on a new topic (time from its creation to the first message
#       consumed, that message's latency, p99 and the worst second's p99) and
#       then on the same topic, warm (p50, p99, worst second's p99);
#     SYNC_FLUSH start: send TPS at 128 B / 1 KiB / 4 KiB, and MiB/s of 1 KiB
#       messages sent in batches of 16 (to set against the disk's sequential
#       bandwidth).
#   ns, topics, conns, backlog, groups, lite, e2e, pop: the scale rows of
#     bench/scale.sh (name server route queries and registration, send over
#     many topics, idle connections, recovery and cold catch-up of a big
#     backlog, many consumer groups reading one topic, many lite topics
#     under one parent: send, pop and ack, heap per lite topic; end-to-end
#     latency at several fixed rates; many simple consumers receiving and
#     acking through the system's gRPC proxy, which needs a start script
#     with a proxy command).
# Medians over the repetitions and the ratios of the first system to each
# other are printed (and written as a Markdown table to OUT/summary.md); a
# cell a system could not fill says "n/a (reason)". Raw numbers go to
# OUT/results.tsv, mqbench output, CSV and SVG files to OUT/, and
# bench/scale_plot.py draws the scale rows as curves (OUT/scale-*.svg).
# With the base rows, disk sequential-write measurements (dd, fdatasync at
# the end; O_DIRECT; 4 KiB O_DSYNC writes) are printed first.
#
# Options:
#   -s LIST      systems, comma-separated: NAME (bench/NAME.sh) or NAME=SCRIPT
#   -x LIST      row groups, comma-separated: base, ns, topics, conns, backlog, groups, lite, e2e, pop,
#                or all (default base)
#   -d SECONDS   each send run (default 20)        -n N     catch-up messages (default 1000000)
#   -r REPS      repetitions (default 3)            -R RATE  e2e rate msgs/s (default 10000)
#   -S RATE      fixed-rate 4 KiB send row, msgs/s (default 20000)
#   -c CONNS     connections (default 4)            -w WIN   window per connection (default 32)
#   -P LIST      ns: route-query client connections (default 100,1000)
#   -G LIST      ns: topics of the registering broker (default 10000,50000)
#   -T LIST      topics: topic counts, 8 queues each (default 1,1000,10000)
#   -K LIST      conns: idle connections (default 0,1000,10000)
#   -g LIST      groups: consumer groups reading one topic (default 1,100,1000)
#   -L LIST      lite: lite topics under one parent (default 1000,100000)
#   -E LIST      e2e: rates, messages/s (default 1000,10000,50000)
#   -O LIST      pop: simple consumers through the gRPC proxy (default 100,1000)
#   -B LIST      backlog: GiB of commit log (default 10; needs that much free disk and root
#                to empty the page cache)
#   -o DIR       output dir (default bench/results/<date>)
#   -q           quick: -d 3 -n 50000 -r 1, 1 s warm-up, scale lists a tenth or less
#   -H           also the replication rows (bench/replication.sh: slave catch-up MB/s,
#                ASYNC vs SYNC_MASTER send TPS and p99), same reps, into OUT/replication
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${ROCKETGO_BIN_DIR:-$ROOT/bin}
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
D=20 N=1000000 REPS=3 RATE=10000 SRATE=20000 C=4 W=32 OUT="" WARM=5 HA=0 QUICK=0
SYS="" ROWS=base NS_CONNS=100,1000 REG_TOPICS=10000,50000 TOPICS=1,1000,10000 IDLE=0,1000,10000 BACKLOG=10 GROUP_COUNTS=1,100,1000 LITES=1000,100000 E2E_RATES=1000,10000,50000
POP_COUNTS=100,1000
while getopts "s:x:d:n:r:R:S:c:w:P:G:T:K:B:g:L:E:O:o:qH" opt; do
	case $opt in
	s) SYS=$OPTARG ;; x) ROWS=$OPTARG ;;
	d) D=$OPTARG ;; n) N=$OPTARG ;; r) REPS=$OPTARG ;; R) RATE=$OPTARG ;; S) SRATE=$OPTARG ;;
	c) C=$OPTARG ;; w) W=$OPTARG ;; o) OUT=$OPTARG ;;
	P) NS_CONNS=$OPTARG ;; G) REG_TOPICS=$OPTARG ;; T) TOPICS=$OPTARG ;; K) IDLE=$OPTARG ;; B) BACKLOG=$OPTARG ;; g) GROUP_COUNTS=$OPTARG ;; L) LITES=$OPTARG ;;
	E) E2E_RATES=$OPTARG ;; O) POP_COUNTS=$OPTARG ;;
	q) D=3 N=50000 REPS=1 WARM=1 QUICK=1 NS_CONNS=10,100 REG_TOPICS=100,1000 TOPICS=1,10,100 IDLE=0,100,1000 BACKLOG=1 GROUP_COUNTS=1,10,100 LITES=100,1000 E2E_RATES=1000,5000
		POP_COUNTS=10,100 POP_MIN_MSGS=${POP_MIN_MSGS:-20000} ;;
	H) HA=1 ;;
	*) sed -n '2,68p' "$0"; exit 2 ;;
	esac
done
shift $((OPTIND - 1))
[ "$ROWS" = all ] && ROWS=base,ns,topics,conns,backlog,groups,lite,e2e,pop
NAMES=() SCRIPTS=()
for s in ${SYS//,/ }; do
	case $s in
	*=*) NAMES+=("${s%%=*}") SCRIPTS+=("${s#*=}") ;;
	*) NAMES+=("$s") SCRIPTS+=("$ROOT/bench/$s.sh") ;;
	esac
done
while [ $# -ge 2 ]; do NAMES+=("$1") SCRIPTS+=("$2"); shift 2; done
if [ ${#NAMES[@]} -eq 0 ]; then
	NAMES=(rocketgo apache) SCRIPTS=("$ROOT/bench/rocketgo.sh" "$ROOT/bench/apache.sh")
	if [ ! -x "$ROOT/compat-tests/reference/run.sh" ] && [ -z "${APACHE_REFERENCE:-}" ]; then
		echo "compare: no Apache reference (compat-tests/reference/run.sh);" >&2
		echo "  give the systems explicitly, e.g.: $0 -q -s rocketgo,rust or $0 -q rocketgo bench/rocketgo.sh rocketgo2 bench/rocketgo.sh" >&2
		exit 3
	fi
fi
for s in "${SCRIPTS[@]}"; do [ -x "$s" ] || { echo "compare: $s is not an executable start script" >&2; exit 2; }; done
has_rows() { [[ ",$ROWS," == *",$1,"* ]]; }
run_ok() { [ "$1" = base ] || declare -F "run_$1" >/dev/null; }
# The scale row groups: run_ns, run_topics, run_conns, run_backlog,
# run_groups, run_lite, run_e2e, run_pop.
# shellcheck source=bench/scale.sh
. "$ROOT/bench/scale.sh"
for g in ${ROWS//,/ }; do
	run_ok "$g" || { echo "compare: unknown row group $g (base, ns, topics, conns, backlog, groups, lite, e2e, pop, all)" >&2; exit 2; }
done
OUT=${OUT:-$ROOT/bench/results/$(date +%Y%m%d-%H%M%S)}
mkdir -p "$OUT"
RES=$OUT/results.tsv
: >"$RES"
MQB=$BIN/mqbench
[ -x "$MQB" ] || { echo "compare: $MQB missing (make build)" >&2; exit 2; }

log() { echo "[$(date +%T)] $*" >&2; }

# rss_kb PID [FIELD]: VmRSS (default) or RssAnon (heap, stacks: without the
# mapped store files, which VmRSS counts once touched) in kB.
rss_kb() { awk -v f="${2:-VmRSS}:" '$1==f{print $2}' "/proc/$1/status" 2>/dev/null || echo 0; }

# maps PID: the process's memory mappings (lines of /proc/PID/maps): every
# mapped store file is one or more, and the kernel allows vm.max_map_count.
maps() { wc -l <"/proc/$1/maps" 2>/dev/null || echo 0; }

# sample_rss PID FILE: max VmRSS, max RssAnon (kB) and max mappings into
# FILE every 200 ms (mappings every second: reading tens of thousands costs)
# until killed. Each line replaces FILE by a rename: a plain redirect
# killed between its truncation and its write leaves FILE empty, as if the
# process had never run.
sample_rss() {
	local max=0 amax=0 mmax=0 v a m n=0
	while kill -0 "$1" 2>/dev/null; do
		v=$(rss_kb "$1") a=$(rss_kb "$1" RssAnon)
		((v > max)) && max=$v
		((a > amax)) && amax=$a
		if ((n++ % 5 == 0)); then
			m=$(maps "$1")
			((m > mmax)) && mmax=$m
		fi
		echo "$max $amax $mmax" >"$2.tmp" && mv -f "$2.tmp" "$2"
		sleep 0.2
	done
}

# sampler_start PID FILE / sampler_stop: sample_rss in the background;
# sampler_stop leaves "max_rss_kb max_anon_kb max_maps" in SAMPLED.
sampler_start() {
	: >"$2"
	sample_rss "$1" "$2" &
	SAMPLER=$! SAMPLER_FILE=$2
}
sampler_stop() {
	kill "$SAMPLER" 2>/dev/null || true
	wait "$SAMPLER" 2>/dev/null || true
	rm -f "$SAMPLER_FILE.tmp"
	SAMPLED=$(cat "$SAMPLER_FILE" 2>/dev/null || true)
	[ -n "$SAMPLED" ] || SAMPLED="0 0 0"
}

# record REP SYSTEM METRIC VALUE: an empty VALUE is recorded as
# "n/a (why)", why being the last failure (FAILED) if any.
record() { # rep system metric value
	local v=$4
	[ -n "$v" ] || v="n/a (${FAILED:-no value})"
	printf '%s\t%s\t%s\t%s\n' "$1" "$2" "$3" "$v" >>"$RES"
}

# field FILE ROLE KEY: KEY of ROLE's SUMMARY line; nothing if the run failed.
field() { [ -e "$1.failed" ] || sed -n "s/^SUMMARY role=$2 .* $3=\([0-9.]*\).*/\1/p" "$1" | tail -1; }
first() { [ -e "$1.failed" ] || sed -n "s/^FIRST .* $2=\([0-9.]*\).*/\1/p" "$1" | tail -1; }

# bench LOGBASE mqbench-args...: runs mqbench, keeps output, CSV, SVG. A
# failure is logged, marked (LOGBASE.txt.failed, which field reads as no
# value) and kept in FAILED; the run goes on.
bench() {
	local base=$1
	shift
	FAILED=""
	rm -f "$base.txt.failed"
	"$MQB" "$@" -csv "$base.csv" -plot "$base.svg" >"$base.txt" 2>&1 || {
		FAILED="mqbench $1: $(grep -v '^ *[0-9.]* [a-z2]* ' "$base.txt" | tail -1 | cut -c1-120)"
		echo "$FAILED" >"$base.txt.failed"
		log "mqbench failed ($base.txt):"; tail -5 "$base.txt" >&2; }
}

PIDS_TO_STOP=()
cleanup() {
	for d in "${PIDS_TO_STOP[@]}"; do
		"${d%%|*}" stop "${d#*|}" >/dev/null 2>&1 || true
		rm -rf "${d#*|}"
	done
}
trap cleanup EXIT

# start_system REP IDX GROUP FLUSH [broker.conf lines]: starts system IDX
# on a fresh store and free ports; sets DIR NS_ADDR BP PID NS_PID LAUNCHED.
# On failure it records "<GROUP> start failed" for the system (every cell of
# the group then says so), cleans up and returns 1.
start_system() {
	local rep=$1 i=$2 group=$3 flush=$4 name=${NAMES[$2]} script=${SCRIPTS[$2]} out ns
	shift 4
	# Let the previous run's dirty pages reach the disk first: writeback
	# competing with the next run skews it (seen: 2x on A/A runs).
	sync
	sleep 2
	DIR=$(mktemp -d "/tmp/mqbench-$name-$group.XXXXXX")
	read -r ns BP < <(pick_ports 2)
	NS_ADDR=127.0.0.1:$ns
	log "$name rep $rep: start $group $flush (ns $NS_ADDR, broker $BP, $DIR)"
	PIDS_TO_STOP+=("$script|$DIR")
	if ! out=$("$script" start "$DIR" "$ns" "$BP" "$flush" "$@" 2>"$DIR/start.err"); then
		# Seen with Apache (its port not open within the start script's
		# wait, once in four runs): that repetition lacks its numbers.
		cat "$DIR/start.err" >&2
		FAILED="start failed: $(tail -1 "$DIR/start.err" | cut -c1-120)"
		log "$name rep $rep: $group $flush $FAILED"
		record "$rep" "$name" "_failed:$group" "n/a ($FAILED)"
		stop_system "$i"
		return 1
	fi
	cat "$DIR/start.err" >&2
	PID=$(sed -n 's/.*broker_pid=\([0-9]*\).*/\1/p' <<<"$out")
	LAUNCHED=$(sed -n 's/.*launched_ns=\([0-9]*\).*/\1/p' <<<"$out")
	NS_PID=$(cat "$DIR/namesrv.pid" 2>/dev/null || echo 0)
}

# stop_system IDX: stops the system started last and removes its store.
stop_system() {
	"${SCRIPTS[$1]}" stop "$DIR" || true
	rm -rf "$DIR"
}

# run_base REP IDX
run_base() {
	local rep=$1 i=$2 name=${NAMES[$2]}
	for flush in ASYNC_FLUSH SYNC_FLUSH; do
		start_system "$rep" "$i" base "$flush" || continue
		local pid=$PID ns_addr=$NS_ADDR
		local pre=$OUT/$name-r$rep-${flush%%_*}
		# Every start waits for its first accepted send: the broker's port opens
		# before it has registered with the name server (Apache: up to seconds).
		"$MQB" probe -n "$ns_addr" -t bench_probe -create-topic -q 1 -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		if [ $flush = ASYNC_FLUSH ]; then
			FAILED="probe: $(tail -1 "$pre-probe.txt")"
			record "$rep" "$name" startup_ms "$(sed -n 's/PROBE first_send_ms=//p' "$pre-probe.txt")"
			sleep 2
			record "$rep" "$name" rss_idle_mb "$(( $(rss_kb "$pid") / 1024 ))"
			record "$rep" "$name" rss_anon_idle_mb "$(( $(rss_kb "$pid" RssAnon) / 1024 ))"
			sampler_start "$pid" "$pre-rss"
			bench "$pre-warm" produce -n "$ns_addr" -t bench_warm -create-topic -c "$C" -w "$W" -s 1024 -d "${WARM}s"
			for s in 128 1024 4096; do
				bench "$pre-send$s" produce -n "$ns_addr" -t "bench_s$s" -create-topic -c "$C" -w "$W" -s $s -d "${D}s"
				record "$rep" "$name" "send_tps_${s}_async" "$(field "$pre-send$s.txt" send tps)"
				record "$rep" "$name" "send_p99_ms_${s}_async" "$(field "$pre-send$s.txt" send p99_ms)"
			done
			# The rows above are closed-loop: their p99 is each broker's queueing at
			# its own saturation. This one sends at the same rate to both.
			bench "$pre-send4096r" produce -n "$ns_addr" -t bench_s4096r -create-topic -c "$C" -w "$W" -s 4096 -rate "$SRATE" -d "${D}s"
			record "$rep" "$name" "send_p99_ms_4096_at_${SRATE}_async" "$(field "$pre-send4096r.txt" send p99_ms)"
			bench "$pre-fill" produce -n "$ns_addr" -t bench_catchup -create-topic -c "$C" -w "$W" -s 1024 -count "$N"
			bench "$pre-catchup" consume -n "$ns_addr" -t bench_catchup -c "$C" -w 4 -count "$N"
			record "$rep" "$name" consume_tps_catchup "$(field "$pre-catchup.txt" pull tps)"
			# End to end on a topic made for the run (as users meet a new topic:
			# new consume queues, first dispatch, parked pulls woken the first
			# time), then again on the same, now warm, topic.
			bench "$pre-e2e" e2e -n "$ns_addr" -t bench_e2e -create-topic -c "$C" -w "$W" -s 1024 -rate "$RATE" -d "${D}s"
			record "$rep" "$name" e2e_new_first_ms "$(first "$pre-e2e.txt" first_consumed_ms)"
			record "$rep" "$name" e2e_new_first_msg_ms "$(first "$pre-e2e.txt" first_e2e_ms)"
			record "$rep" "$name" e2e_new_p99_ms "$(field "$pre-e2e.txt" e2e p99_ms)"
			record "$rep" "$name" e2e_new_worst_s_p99_ms "$(field "$pre-e2e.txt" e2e worst_p99_ms)"
			bench "$pre-e2ew" e2e -n "$ns_addr" -t bench_e2e -c "$C" -w "$W" -s 1024 -rate "$RATE" -d "${D}s"
			record "$rep" "$name" e2e_p50_ms "$(field "$pre-e2ew.txt" e2e p50_ms)"
			record "$rep" "$name" e2e_p99_ms "$(field "$pre-e2ew.txt" e2e p99_ms)"
			record "$rep" "$name" e2e_worst_s_p99_ms "$(field "$pre-e2ew.txt" e2e worst_p99_ms)"
			sampler_stop
			read -r rmax amax _ <<<"$SAMPLED"
			record "$rep" "$name" rss_load_mb "$(( rmax / 1024 ))"
			record "$rep" "$name" rss_anon_load_mb "$(( amax / 1024 ))"
		else
			bench "$pre-warm" produce -n "$ns_addr" -t bench_warm -create-topic -c "$C" -w "$W" -s 1024 -d "${WARM}s"
			for s in 128 1024 4096; do
				bench "$pre-send$s" produce -n "$ns_addr" -t "bench_s$s" -create-topic -c "$C" -w "$W" -s $s -d "${D}s"
				record "$rep" "$name" "send_tps_${s}_sync" "$(field "$pre-send$s.txt" send tps)"
				record "$rep" "$name" "send_p99_ms_${s}_sync" "$(field "$pre-send$s.txt" send p99_ms)"
			done
			# The disk-bandwidth target: 1 KiB messages in batches of 16, 4x the window.
			bench "$pre-sendb16" produce -n "$ns_addr" -t bench_b16 -create-topic -c "$C" -w "$((W * 4))" -b 16 -s 1024 -d "${D}s"
			record "$rep" "$name" send_mibps_1024x16_sync "$(field "$pre-sendb16.txt" send mibps)"
		fi
		stop_system "$i"
	done
}

# disk: sequential write bandwidth as the broker sees it over a run: 3 GiB
# to a fresh file, fdatasync at the end. This VM's virtio disk bursts (a
# single 1 GiB write measured 341-756 MB/s, and 1.8 GB/s when rewriting
# the blocks of a file just deleted), so a short or repeated write
# overstates what a 10 s run can sustain. Kept in $OUT/disk_mbps for the
# SYNC_FLUSH bandwidth target below. The device itself is faster than any
# page-cache writer here (2 GiB with O_DIRECT: 1.4-1.5 GB/s; buffered
# writes are bound by the CPU cost of fresh page-cache pages on this VM);
# that figure is printed too, in $OUT/disk_direct_mbps.
disk() {
	local f seq dsync direct
	f=$(mktemp "${TMPDIR:-/tmp}/mqbench-dd.XXXXXX")
	log "disk: sequential write 3 GiB (fdatasync at end), then 4 KiB O_DSYNC writes"
	seq=$(dd if=/dev/zero of="$f" bs=1M count=3072 conv=fdatasync 2>&1 | tail -1)
	rm -f "$f"
	awk '{u=$NF; v=$(NF-1); if (u=="GB/s") v*=1000; if (u=="kB/s") v/=1000; print v}' <<<"$seq" >"$OUT/disk_mbps"
	dsync=$(dd if=/dev/zero of="$f" bs=4k count=5000 oflag=dsync 2>&1 | tail -1)
	rm -f "$f"
	direct=$(dd if=/dev/zero of="$f" bs=1M count=2048 oflag=direct conv=fdatasync 2>&1 | tail -1)
	rm -f "$f"
	awk '{u=$NF; v=$(NF-1); if (u=="GB/s") v*=1000; if (u=="kB/s") v/=1000; print v}' <<<"$direct" >"$OUT/disk_direct_mbps"
	echo "disk sequential (3 GiB, 1 MiB blocks, fdatasync):  $seq"
	echo "disk sequential O_DIRECT (2 GiB, 1 MiB blocks):     $direct"
	echo "disk 4 KiB O_DSYNC (≈ SYNC_FLUSH commits/s bound): $dsync"
}

if has_rows conns || has_rows pop; then
	# Each idle connection (each pop consumer's) is a descriptor in the
	# client and in the server (they inherit this shell's limit).
	ulimit -n "$(ulimit -Hn)" 2>/dev/null || true
fi

{
	echo "# compare: ${NAMES[*]}; rows $ROWS; send ${D}s x 128/1024/4096 B, catch-up $N, e2e ${RATE}/s, c=$C w=$W, reps=$REPS, $(nproc) CPUs"
	has_rows ns && echo "# ns: route queries with $NS_CONNS connections x $NS_WINDOW in flight, registration of $REG_TOPICS topics"
	has_rows topics && echo "# topics: $TOPICS topics x 8 queues; vm.max_map_count $(cat /proc/sys/vm/max_map_count)"
	has_rows conns && echo "# conns: $IDLE idle connections; open files limit $(ulimit -n)"
	has_rows groups && echo "# groups: $GROUP_COUNTS consumer groups reading one topic"
	has_rows lite && echo "# lite: $LITES lite topics under one parent"
	has_rows e2e && echo "# e2e: end to end at $E2E_RATES msgs/s"
	has_rows pop && echo "# pop: $POP_COUNTS simple consumers through the gRPC proxy, max(100 x consumers, $POP_MIN_MSGS) messages"
	has_rows backlog && echo "# backlog: $BACKLOG GiB of 16 KiB messages; live sends ${LIVE_RATE}/s; $(df -h --output=avail "${TMPDIR:-/tmp}" | tail -1 | tr -d ' ') free"
	if has_rows base; then disk; fi
} | tee "$OUT/summary.txt"

# Systems rotate: ABC, BCA, CAB, ... (AB, BA with two).
for ((rep = 1; rep <= REPS; rep++)); do
	for ((k = 0; k < ${#NAMES[@]}; k++)); do
		i=$(((k + rep - 1) % ${#NAMES[@]}))
		for g in ${ROWS//,/ }; do "run_$g" "$rep" "$i"; done
	done
done

python3 "$ROOT/bench/summary.py" "$OUT" "${NAMES[@]}" | tee -a "$OUT/summary.txt"
if has_rows ns || has_rows topics || has_rows conns || has_rows backlog || has_rows groups || has_rows lite || has_rows e2e || has_rows pop; then
	python3 "$ROOT/bench/scale_plot.py" "$OUT" "${NAMES[@]}" >&2 || log "scale_plot.py failed"
fi
if has_rows e2e; then
	python3 "$ROOT/bench/e2e_plot.py" "$OUT" "${NAMES[@]}" -rates "$E2E_RATES" -o "$OUT/e2e_rates_p99.svg" >&2 || log "e2e_plot.py failed"
fi
if ((HA)); then
	if ((QUICK)); then qa=(-q); else qa=(-r "$REPS"); fi
	"$ROOT/bench/replication.sh" "${qa[@]}" -o "$OUT/replication" rocketgo apache
fi
echo "results: $OUT" >&2
