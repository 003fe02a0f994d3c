#!/usr/bin/env bash
# Start/stop adapter for rocketmq-rust (crates rocketmq-namesrv and
# rocketmq-broker), with the same contract as bench/rocketgo.sh:
#
#   bench/rust.sh start DIR NS_PORT BROKER_PORT [FLUSH_TYPE] [extra broker.conf lines...]
#   bench/rust.sh stop  DIR
#   bench/rust.sh heap  DIR   -> the broker's private memory (RssAnon) in bytes
#   bench/rust.sh install          install the pinned binaries if missing
#
# heap: Rust has no collector to run first, so what the lite rows count as
# live heap is, for rocketmq-rust, the anonymous memory its allocator holds.
#
# The binaries are installed with `cargo install --locked` at the pinned
# version into ROCKETMQ_RUST_ROOT (default ~/.cache/rocketgo-bench/rocketmq-rust,
# build tree ~/.cache/rocketgo-bench/cargo-target) the first time they are
# needed, under nice, one build at a time (flock); later runs reuse them.
# ROCKETMQ_RUST_VERSION overrides the pin.
#
# Configuration, as the project documents it for throughput:
#   name server (TOML): the thread-pool and queue sizes of its production
#     baseline (resource/namesrv-production.toml): clientRequestThreadPoolNums
#     16, defaultThreadPoolNums 32, clientRequestThreadPoolQueueCapacity
#     100000, defaultThreadPoolQueueCapacity 20000; its TLS, ACL and observe-only
#     admission settings are left out (none of the other systems runs them),
#     the route response cache stays off as that file and benches/README.md
#     advise.
#   broker (Java properties, which the broker converts to its TOML schema and
#     reports on in DIR/broker.conversion.json): flushCommitLogLeastPages=1,
#     the nearest 1.0.0 takes to the "maximum performance" setting (0) of its
#     performance-tuning page (with ASYNC_FLUSH it refuses 0 and exits with
#     "Service lifecycle operation failed", nothing logged); the same keys
#     as bench/apache.sh otherwise, except diskMaxUsedSpaceRatio (99 there),
#     which 1.0.0 requires below diskSpaceCleanForciblyRatio (85): its
#     default, 75, is kept. That page's
#     sendMessageThreadPoolNums/pullMessageThreadPoolNums and socket buffer
#     keys do not exist in 1.0.0's schema (the broker refuses unknown keys):
#     its tokio runtime has one worker per CPU.
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
# shellcheck source=bench/lib.sh
. "$ROOT/bench/lib.sh"
VERSION=${ROCKETMQ_RUST_VERSION:-1.0.0}
CACHE=${ROCKETGO_BENCH_CACHE:-$HOME/.cache/rocketgo-bench}
RROOT=${ROCKETMQ_RUST_ROOT:-$CACHE/rocketmq-rust}
NSBIN=$RROOT/bin/rocketmq-namesrv-rust
BRBIN=$RROOT/bin/rocketmq-broker-rust

# installed BIN: the binary reports the pinned version.
installed() {
	[ -x "$1" ] && "$1" --version 2>/dev/null | grep -qx "version=$VERSION"
}

# install: cargo install each crate whose binary is missing or another version.
install() {
	installed "$NSBIN" && installed "$BRBIN" && return 0
	command -v cargo >/dev/null || { echo "rust.sh: cargo not found (rustup.rs); needed once to build rocketmq-rust $VERSION" >&2; return 3; }
	mkdir -p "$RROOT"
	(
		# Two runs at once would build twice into the same tree.
		flock 9
		for crate in rocketmq-namesrv:"$NSBIN" rocketmq-broker:"$BRBIN"; do
			installed "${crate#*:}" && continue
			echo "rust.sh: building ${crate%%:*} $VERSION (once; log $RROOT/${crate%%:*}.log)" >&2
			CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$CACHE/cargo-target} nice -n 19 \
				cargo install --locked --force --version "$VERSION" --root "$RROOT" "${crate%%:*}" \
				>"$RROOT/${crate%%:*}.log" 2>&1 ||
				{ echo "rust.sh: cargo install ${crate%%:*} failed; see $RROOT/${crate%%:*}.log" >&2; exit 3; }
		done
	) 9>"$RROOT/.install.lock"
}

case "${1:-}" in
install)
	install
	;;
start)
	dir=$2 ns=$3 bp=$4 flush=${5:-ASYNC_FLUSH}
	shift 4; [ $# -gt 0 ] && shift
	install
	mkdir -p "$dir/namesrv" "$dir/broker/conf" "$dir/store/config"
	if [ -n "${BENCH_TOPICS_JSON:-}" ]; then cp "$BENCH_TOPICS_JSON" "$dir/store/config/topics.json"; fi
	cat >"$dir/namesrv.toml" <<CONF
rocketmqHome = "$dir/namesrv"
kvConfigPath = "$dir/namesrv/kvConfig.json"
configStorePath = "$dir/namesrv/namesrv.properties"
clientRequestThreadPoolNums = 16
defaultThreadPoolNums = 32
clientRequestThreadPoolQueueCapacity = 100000
defaultThreadPoolQueueCapacity = 20000
CONF
	# Later lines win, as in rocketgo's loader; the broker refuses a key
	# given twice, so a default an extra line overrides is left out.
	{
		cat <<CONF
brokerClusterName=BenchCluster
brokerName=broker-bench
brokerId=0
listenPort=$bp
namesrvAddr=127.0.0.1:$ns
brokerIP1=127.0.0.1
storePathRootDir=$dir/store
storePathCommitLog=$dir/store/commitlog
haListenPort=$((bp + 1))
flushDiskType=$flush
flushCommitLogLeastPages=1
autoCreateTopicEnable=true
timerWheelEnable=false
CONF
		for l in "$@"; do echo "$l"; done
	} | awk -F= '{k[NR]=$1; v[NR]=$0; last[$1]=NR} END {for (i = 1; i <= NR; i++) if (last[k[i]] == i) print v[i]}' >"$dir/broker.conf"
	# HOME too: anything either writes under ~ stays in DIR.
	HOME=$dir ROCKETMQ_HOME=$dir/namesrv "$NSBIN" -c "$dir/namesrv.toml" --listenPort "$ns" --bindAddress 127.0.0.1 \
		>>"$dir/namesrv.log" 2>&1 &
	echo $! >"$dir/namesrv.pid"
	wait_port "$ns" 30 "$(cat "$dir/namesrv.pid")"
	launched=$(date +%s%N)
	HOME=$dir ROCKETMQ_HOME=$dir/broker "$BRBIN" -c "$dir/broker.conf" -n "127.0.0.1:$ns" >>"$dir/broker.log" 2>&1 &
	echo $! >"$dir/broker.pid"
	wait_port "$bp" 60 "$(cat "$dir/broker.pid")"
	echo "broker_pid=$(cat "$dir/broker.pid") launched_ns=$launched"
	;;
heap)
	awk '/^RssAnon:/ {print $2 * 1024}' "/proc/$(cat "$2/broker.pid")/status"
	;;
stop)
	exec "$(dirname "$0")/rocketgo.sh" stop "$2"
	;;
*)
	echo "usage: $0 start DIR NS_PORT BROKER_PORT [FLUSH_TYPE] [conf lines] | stop DIR | heap DIR | install" >&2
	exit 2
	;;
esac
