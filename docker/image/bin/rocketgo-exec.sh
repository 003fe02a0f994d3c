# rocketgo-exec.sh is sourced by the mq* scripts in this directory: they are
# sh scripts, as in apache/rocketmq's image, so `sh mqbroker ...`,
# `./mqbroker ...` and the entrypoint all work, and each ends by exec'ing the
# static Go binary in ${ROCKETMQ_HOME}/lib so the server is the container's
# PID 1 (docker stop's SIGTERM reaches it). Never starts a JVM: the JVM
# variables Apache's scripts read are accepted and ignored with one line.

: "${ROCKETMQ_HOME:=$(cd "$(dirname "$0")/.." && pwd)}"
export ROCKETMQ_HOME

rocketgo_exec() {
	_name=$1
	shift
	_ignored=""
	for _v in JAVA_OPT_EXT HEAP_OPTS BROKER_MEM JAVA_OPT JAVA_HOME; do
		eval "_val=\${$_v:-}"
		[ -n "$_val" ] && _ignored="$_ignored $_v"
	done
	if [ -n "$_ignored" ]; then
		printf '{"level":"info","component":"%s","ignored":"%s","message":"JVM settings are ignored: rocketgo is a Go binary, not a JVM"}\n' \
			"$_name" "${_ignored# }" >&2
	fi
	# The servers also write their JSON log lines to <program>.log in the
	# logs directory, rotated (ROCKETGO_LOG_DIR), when it is writable (a
	# host directory mounted there must be writable by uid 3000, as for
	# Apache's image); docker logs shows stderr either way.
	_logs=${ROCKETGO_LOG_DIR:-$HOME/logs}
	if mkdir -p "$_logs" 2>/dev/null && [ -w "$_logs" ]; then
		export ROCKETGO_LOG_DIR="$_logs"
	else
		unset ROCKETGO_LOG_DIR
		printf '{"level":"warn","component":"%s","dir":"%s","uid":"%s","message":"logs directory not writable: logging to stderr only"}\n' \
			"$_name" "$_logs" "$(id -u)" >&2
	fi
	exec "$ROCKETMQ_HOME/lib/$_name" "$@"
}
