#!/usr/bin/env bash
# Regenerates store/testdata/apache/store.tar.gz and manifest.txt with the
# Apache RocketMQ 5.3.1 broker (run in-process by gen/Gen.java) registering
# with rocketgo's own mqnamesrv. Needs Java 17, Maven and network access to
# Maven Central (or a warm ~/.m2). Usage: store/testdata/apache/gen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=$(mktemp -d /tmp/rocketgo-apache-fixture.XXXXXX)
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$work"' EXIT

(cd "$root" && go build -o "$work/bin/" ./cmd/mqnamesrv)
mvn -q -f "$here/gen/pom.xml" dependency:build-classpath -Dmdep.outputFile="$work/cp.txt"
mkdir -p "$work/classes"
javac -d "$work/classes" -cp "$(cat "$work/cp.txt")" "$here/gen/src/main/java/gen/Gen.java"

nsport=$((20000 + RANDOM % 20000))
printf 'listenPort=%s\n' "$nsport" > "$work/namesrv.conf"
"$work/bin/mqnamesrv" -c "$work/namesrv.conf" 2> "$work/namesrv.log" &
sleep 1
java -Duser.home="$work/home" -Drocketmq.home.dir="$work/home" \
	-cp "$work/classes:$(cat "$work/cp.txt")" gen.Gen \
	"$work/store" "127.0.0.1:$nsport" $((nsport + 10)) "$work/manifest.txt" > "$work/gen.log" 2>&1 \
	|| { tail -50 "$work/gen.log"; exit 1; }
tail -1 "$work/gen.log"
rm -f "$work/store/lock"
tar -C "$work/store" --sort=name --owner=0 --group=0 --numeric-owner --mtime=@0 -czf "$here/store.tar.gz" .
cp "$work/manifest.txt" "$here/manifest.txt"
ls -l "$here/store.tar.gz" "$here/manifest.txt"
