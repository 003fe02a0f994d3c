#!/usr/bin/env bash
# Runs the Apache RocketMQ reference (name server and broker, version pinned in
# pom.xml) from jars Maven resolves; nothing is installed by hand.
#
#   run.sh classpath                         print the classpath (resolving it once)
#   run.sh namesrv PORT DIR                  exec the name server on 127.0.0.1:PORT
#   run.sh broker PORT NSADDR DIR [CLUSTER]  exec a broker on 127.0.0.1:PORT, store under DIR
#                                            (lines of DIR/broker.extra.properties, when present,
#                                            are appended to its config: later keys win)
#   run.sh broker-acl1 PORT NSADDR DIR [CLUSTER]
#                                            the same with Apache 5.3.1's broker (acl1/pom.xml):
#                                            the last line with ACL 1.0 (aclEnable, plain_acl.yml)
#   run.sh proxy GRPCPORT REMOTINGPORT NSADDR DIR [CLUSTER]
#                                            exec Apache's proxy (cluster mode) on 127.0.0.1
#                                            (DIR/proxy.extra.json, when present: more
#                                            ,"key":value members of rmq-proxy.json)
#   run.sh controller CONF DIR               exec Apache's controller (ControllerStartup -c CONF;
#                                            DLedger between controllers), ROCKETMQ_HOME=DIR
#   run.sh all [NSPORT BROKERPORT DIR]       both in the foreground (make reference); Ctrl-C stops
#
# DIR is ROCKETMQ_HOME and user.home (logs land in DIR/logs). Heap is 256 MB.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
# ROCKETGO_REFERENCE_VERSION overrides the version pinned in pom.xml (this
# directory's; acl1/ keeps its own).
# classpath [DIR]: the classpath of DIR/pom.xml (default: this directory's).
classpath() {
	local d=${1:-$here}
	local ver=""
	if [[ "$d" == "$here" && -n "${ROCKETGO_REFERENCE_VERSION:-}" ]]; then
		ver=$ROCKETGO_REFERENCE_VERSION
	fi
	local cpfile="$d/target/classpath${ver:+-$ver}.txt"
	if [[ ! -s "$cpfile" || "$d/pom.xml" -nt "$cpfile" ]]; then
		mkdir -p "$d/target"
		mvn -q -f "$d/pom.xml" ${ver:+-Drocketmq.version=$ver} dependency:build-classpath -Dmdep.outputFile="$cpfile" >&2
	fi
	cat "$cpfile"
}

# The JVM flags of upstream's runserver.sh/runbroker.sh for JDK >= 9, with a small heap,
# after $JAVA_OPT (as upstream's scripts take it: -Dtls.* and the like).
# java.io.tmpdir is DIR/tmp: each start writes a self-signed certificate and
# the RocksDB and JNA libraries (12 MB) there, and a JVM stopped with kill -9
# leaves them; under DIR they go with the test's directory.
java_opts() {
	local dir=$1
	mkdir -p "$dir/tmp"
	echo ${JAVA_OPT:-} -server -Xms256m -Xmx256m -Xmn128m -XX:MaxDirectMemorySize=256m \
		-XX:+UseG1GC -XX:G1HeapRegionSize=16m -XX:G1ReservePercent=25 \
		-XX:InitiatingHeapOccupancyPercent=30 -XX:SoftRefLRUPolicyMSPerMB=0 \
		-XX:-OmitStackTraceInFastThrow -XX:-UseLargePages \
		--add-opens java.base/java.nio=ALL-UNNAMED \
		--add-opens java.base/sun.nio.ch=ALL-UNNAMED \
		--add-exports java.base/jdk.internal.ref=ALL-UNNAMED \
		-Duser.home="$dir" -Drocketmq.home.dir="$dir" -Djava.io.tmpdir="$dir/tmp"
}

namesrv() {
	local port=$1 dir=$2
	mkdir -p "$dir"
	printf 'listenPort=%s\n' "$port" >"$dir/namesrv.properties"
	local cp
	cp=$(classpath)
	export ROCKETMQ_HOME="$dir"
	# shellcheck disable=SC2046
	exec java $(java_opts "$dir") -cp "$cp" org.apache.rocketmq.namesrv.NamesrvStartup -c "$dir/namesrv.properties"
}

broker() {
	local port=$1 ns=$2 dir=$3 cluster=${4:-ReferenceCluster}
	mkdir -p "$dir/store"
	cat >"$dir/broker.properties" <<CONF
brokerClusterName=$cluster
brokerName=broker-ref
brokerId=0
listenPort=$port
namesrvAddr=$ns
brokerIP1=127.0.0.1
storePathRootDir=$dir/store
storePathCommitLog=$dir/store/commitlog
flushDiskType=ASYNC_FLUSH
autoCreateTopicEnable=true
mappedFileSizeCommitLog=67108864
diskMaxUsedSpaceRatio=99
CONF
	if [[ -f "$dir/broker.extra.properties" ]]; then
		cat "$dir/broker.extra.properties" >>"$dir/broker.properties"
	fi
	local cp
	cp=$(classpath "${broker_pom_dir:-$here}")
	export ROCKETMQ_HOME="$dir"
	# shellcheck disable=SC2046
	exec java $(java_opts "$dir") -cp "$cp" org.apache.rocketmq.broker.BrokerStartup -c "$dir/broker.properties" -n "$ns"
}

controller() {
	local conf=$1 dir=$2
	mkdir -p "$dir"
	local cp
	cp=$(classpath)
	export ROCKETMQ_HOME="$dir"
	# shellcheck disable=SC2046
	exec java $(java_opts "$dir") -cp "$cp" org.apache.rocketmq.controller.ControllerStartup -c "$conf"
}

proxy() {
	local gport=$1 rport=$2 ns=$3 dir=$4 cluster=${5:-ReferenceCluster}
	mkdir -p "$dir/conf"
	cat >"$dir/conf/rmq-proxy.json" <<CONF
{"rocketMQClusterName":"$cluster","namesrvAddr":"$ns","grpcServerPort":$gport,"remotingListenPort":$rport,"proxyMode":"cluster"$(cat "$dir/proxy.extra.json" 2>/dev/null || true)}
CONF
	local cp
	cp=$(classpath)
	export ROCKETMQ_HOME="$dir"
	# shellcheck disable=SC2046
	exec java $(java_opts "$dir") -cp "$cp" org.apache.rocketmq.proxy.ProxyStartup -pc "$dir/conf/rmq-proxy.json" -pm cluster
}

all() {
	local nsport=${1:-9886} bport=${2:-10921} dir=${3:-$(mktemp -d /tmp/rocketmq-reference.XXXXXX)}
	classpath >/dev/null
	trap 'kill $(jobs -p) 2>/dev/null; wait' EXIT INT TERM
	"$0" namesrv "$nsport" "$dir/namesrv" &
	"$0" broker "$bport" "127.0.0.1:$nsport" "$dir/broker" &
	echo "Apache RocketMQ reference: namesrv 127.0.0.1:$nsport, broker 127.0.0.1:$bport, files under $dir (Ctrl-C stops)" >&2
	wait
}

cmd=${1:-all}
shift || true
case "$cmd" in
classpath) classpath ;;
namesrv) namesrv "$@" ;;
broker) broker "$@" ;;
broker-acl1) broker_pom_dir="$here/acl1" broker "$@" ;;
proxy) proxy "$@" ;;
controller) controller "$@" ;;
all) all "$@" ;;
*) echo "usage: $0 classpath | namesrv PORT DIR | broker[-acl1] PORT NSADDR DIR [CLUSTER] | proxy GRPCPORT REMOTINGPORT NSADDR DIR [CLUSTER] | controller CONF DIR | all [NSPORT BROKERPORT DIR]" >&2; exit 2 ;;
esac
