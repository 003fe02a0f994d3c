#!/usr/bin/env bash
# Regenerates the golden epoch files in this directory with Apache RocketMQ
# 5.3.3's own EpochFileCache (gen/EpochGen.java, compiled against the
# reference broker's classpath from compat-tests/reference/run.sh) and
# records what Apache reads back in apache.txt. Needs Java 17 and Maven (or
# a warm ~/.m2). Usage: store/testdata/epochfile/gen.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/rocketgo-epochgen.XXXXXX")
trap 'rm -rf "$work"' EXIT

cp=$("$root/compat-tests/reference/run.sh" classpath)
mkdir -p "$work/classes"
javac -d "$work/classes" -cp "$cp" "$here/gen/EpochGen.java"
java -Duser.home="$work" -Drocketmq.home.dir="$work" -cp "$work/classes:$cp" gen.EpochGen "$work/out" >"$work/apache.txt"
for d in "$work"/out/*/; do
	name=$(basename "$d")
	rm -rf "${here:?}/$name"
	mkdir -p "$here/$name"
	cp "$d"/epochFileCheckpoint* "$here/$name/"
done
cp "$work/apache.txt" "$here/apache.txt"
cat "$here/apache.txt"
