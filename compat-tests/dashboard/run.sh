#!/usr/bin/env bash
# rocketmq-dashboard against rocketgo and the Apache reference
# (compat-tests/dashboard_test.go: TestDashboard compares the REST answers and
# what every page shows in headless Chromium). The
# dashboard is built from its public sources at a pinned commit, outside the
# repository: nothing of it is committed.
#
#   run.sh build     build the jar, front end included, into $CACHE (once)
#   run.sh chromium  install Debian's chromium when /usr/bin/chromium is missing
#   run.sh           both when missing, then run TestDashboard
#                    (make test-dashboard)
#
# DASHBOARD_SRC=DIR    build from this checkout instead of cloning
# DASHBOARD_REPO=URL   clone from here (a local mirror) instead of GitHub
# CACHE                default /var/cache/rocketgo-dashboard
# ROCKETGO_DASHBOARD_RESULTS=DIR  keep the screenshots and DOM values there
#
# The pom's frontend steps download Node.js from its own site, which a
# registry-only machine cannot reach: they are skipped (-Dskip.installnodenpm
# -Dskip.npm) and the front end (frontend-new, a create-react-app) is built
# here with the machine's node and npm from the lock file; the pom's antrun
# step then copies frontend-new/build into the jar as before.
set -euo pipefail

here=$(cd "$(dirname "$0")" && pwd)
repo_url=${DASHBOARD_REPO:-https://github.com/apache/rocketmq-dashboard.git}
commit=770822bbc812bfd0c2a94aa0128ab6f59b50d076
cache=${CACHE:-/var/cache/rocketgo-dashboard}
jar=$cache/rocketmq-dashboard.jar
# The built front end is recorded beside the jar: a jar from the REST-only
# build (no such mark) is rebuilt.
mark=$cache/frontend-$commit

build() {
	mkdir -p "$cache"
	local src=${DASHBOARD_SRC:-$cache/src}
	if [[ -z "${DASHBOARD_SRC:-}" && ! -f "$src/pom.xml" ]]; then
		git clone -q "$repo_url" "$src"
		git -C "$src" checkout -q "$commit"
	fi
	local fe=$src/frontend-new
	if [[ ! -f "$fe/build/index.html" ]] || grep -q 'frontend not built' "$fe/build/index.html"; then
		rm -rf "$fe/build"
		# The lock file names a mirror of the npm registry for every
		# tarball; the integrity hashes pin the same files, fetched here
		# from the registry npm is configured with.
		local reg
		reg=$(npm config get registry)
		sed -i -E "s#\"resolved\": \"https://[^/]+/#\"resolved\": \"${reg%/}/#" "$fe/package-lock.json"
		# CI=false: react-scripts fails the build on lint warnings under CI.
		(cd "$fe" && nice -n 19 npm ci --no-audit --no-fund --loglevel=error &&
			CI=false GENERATE_SOURCEMAP=false nice -n 19 npm run build)
	fi
	(cd "$src" && nice -n 19 mvn -B -q -Dmaven.test.skip=true -Dcheckstyle.skip -Drat.skip -Djacoco.skip=true \
		-Dskip.installnodenpm -Dskip.npm package)
	cp "$(ls "$src"/target/rocketmq-dashboard-*.jar | head -1)" "$jar"
	touch "$mark"
	echo "built $jar" >&2
}

chromium() {
	[[ -x /usr/bin/chromium ]] && return
	apt-get update -qq
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null
}

case "${1:-test}" in
build) build ;;
chromium) chromium ;;
test)
	[[ -f "$jar" && -f "$mark" ]] || build
	chromium
	cd "$here/.."
	ROCKETGO_JAVA=1 ROCKETGO_DASHBOARD=1 ROCKETGO_DASHBOARD_JAR="$jar" \
		go test -count=1 -timeout 20m -v -run 'TestDashboard$' .
	;;
*) echo "usage: $0 [build|chromium|test]" >&2; exit 2 ;;
esac
