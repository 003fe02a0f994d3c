#!/usr/bin/env bash
# rocketmq-dashboard against rocketgo and the Apache 5.3.3 reference
# (compat-tests/dashboard_test.go, TestDashboard). The dashboard is built
# from its public sources at a pinned commit, outside the repository:
# nothing of it is committed.
#
#   run.sh build   build the jar into $CACHE/rocketmq-dashboard.jar (once)
#   run.sh         build when missing, then run TestDashboard (make test-dashboard)
#
# DASHBOARD_SRC=DIR   build from this checkout instead of cloning
# CACHE               default /var/cache/rocketgo-dashboard
#
# The backend only: the pom's frontend steps download Node.js from its own
# site at build time, which a registry-only machine cannot reach, so they
# are skipped (-Dskip.installnodenpm -Dskip.npm) and an empty page stands in
# for the React build. The REST API the pages call is all the test uses.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo_url=https://github.com/apache/rocketmq-dashboard.git
commit=770822bbc812bfd0c2a94aa0128ab6f59b50d076
cache=${CACHE:-/var/cache/rocketgo-dashboard}
jar=$cache/rocketmq-dashboard.jar

build() {
	mkdir -p "$cache"
	local src=${DASHBOARD_SRC:-$cache/src}
	if [[ -z "${DASHBOARD_SRC:-}" && ! -f "$src/pom.xml" ]]; then
		git clone -q "$repo_url" "$src"
		git -C "$src" checkout -q "$commit"
	fi
	mkdir -p "$src/frontend-new/build"
	[[ -f "$src/frontend-new/build/index.html" ]] ||
		echo '<html><body>rocketmq-dashboard REST API only (frontend not built)</body></html>' >"$src/frontend-new/build/index.html"
	(cd "$src" && mvn -B -q -Dmaven.test.skip=true -Dcheckstyle.skip -Drat.skip -Djacoco.skip=true \
		-Dskip.installnodenpm -Dskip.npm package)
	cp "$(ls "$src"/target/rocketmq-dashboard-*.jar | head -1)" "$jar"
	echo "built $jar" >&2
}

case "${1:-test}" in
build) build ;;
test)
	[[ -f "$jar" ]] || build
	cd "$here/.."
	ROCKETGO_JAVA=1 ROCKETGO_DASHBOARD=1 ROCKETGO_DASHBOARD_JAR="$jar" \
		go test -count=1 -timeout 15m -v -run 'TestDashboard$' .
	;;
*) echo "usage: $0 [build|test]" >&2; exit 2 ;;
esac
