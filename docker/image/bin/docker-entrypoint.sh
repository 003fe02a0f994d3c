#!/bin/sh
# Entry point with apache/rocketmq's contract: a first argument, or
# NODE_ROLE, of nameserver / broker / controller runs that server with the
# remaining arguments; anything else is exec'd as given (compose files use
# `sh mqnamesrv`, `sh mqbroker -c ...`, `sh mqproxy -pc ...`,
# `sh mqcontroller -c ...`).
set -e
role=${NODE_ROLE:-}
case "${1:-}" in
nameserver | broker | controller)
	role=$1
	shift
	;;
dummy)
	# Apache's CMD placeholder: with NODE_ROLE, no arguments.
	[ -z "$role" ] || shift
	;;
esac
case "$role" in
nameserver) exec ./mqnamesrv "$@" ;;
broker) exec ./mqbroker "$@" ;;
controller)
	# Without -c, the controller.conf of the image (one controller on
	# 9878, Apache's single-controller quick start).
	[ $# -gt 0 ] || set -- -c ../conf/controller/controller-standalone.conf
	exec ./mqcontroller "$@"
	;;
esac
exec "$@"
