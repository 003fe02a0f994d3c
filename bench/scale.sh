# Scale row groups of bench/compare.sh; sourced by it, never run. Each
# run_GROUP REP IDX runs one system (IDX into NAMES/SCRIPTS) once, every
# point on a fresh start and store, and records metrics named
# GROUP_MEASURE@X (X: the point's connections, topics, GiB, consumer
# groups, lite topics, messages per second or gRPC consumers), which
# bench/scale_plot.py draws as curves. Uses compare.sh's helpers (record,
# bench, field, first, start_system, sampler_*, sample_rss, rss_kb) and
# settings (OUT, MQB, D, WARM, C, W, NS_CONNS, REG_TOPICS, TOPICS, IDLE,
# BACKLOG, GROUP_COUNTS, LITES, E2E_RATES, POP_COUNTS, POP_MIN_MSGS).

# In-flight route queries per client connection: a client refreshes a
# topic's route with one synchronous request at a time.
NS_WINDOW=${NS_WINDOW:-1}

# pop: the fewest messages a point stores and acks (100 per consumer when
# that is more): enough that a point lasts 10 s or more at rocketgo's
# rate here (about 8,000-15,000 a second on 2 CPUs) and that every
# consumer receives a dozen times or more.
POP_MIN_MSGS=${POP_MIN_MSGS:-200000}

# topics_json FILE PREFIX N: Apache's topics.json (TopicConfigSerializeWrapper)
# holding N topics of 8 read and write queues, named as mqbench -topics
# names them (PREFIX alone for 1, else PREFIX_0 .. PREFIX_<N-1>).
topics_json() {
	python3 - "$@" <<'PY'
import json, sys, time
path, prefix, n = sys.argv[1], sys.argv[2], int(sys.argv[3])
names = [prefix] if n == 1 else [f"{prefix}_{i}" for i in range(n)]
table = {t: {"topicName": t, "readQueueNums": 8, "writeQueueNums": 8, "perm": 6,
             "topicFilterType": "SINGLE_TAG", "topicSysFlag": 0, "order": False, "attributes": {}}
         for t in names}
with open(path, "w") as f:
    json.dump({"topicConfigTable": table,
               "dataVersion": {"counter": 1, "stateVersion": 0, "timestamp": int(time.time() * 1000)}}, f)
PY
}

# last_topic PREFIX N: the last of the N topics topics_json names.
last_topic() { if [ "$2" -eq 1 ]; then echo "$1"; else echo "$1_$(($2 - 1))"; fi; }

# run_ns REP IDX: the name server.
#   ns_route_*@P   P client connections each with NS_WINDOW route queries
#                  (GET_ROUTEINFO_BY_TOPIC, one topic of 8 queues) in flight
#                  for D seconds: answers/s, p99, the name server's peak
#                  VmRSS meanwhile; ns_rss_idle_mb before them.
#   ns_reg_*@G     a broker started with G topics (8 queues each) in its
#                  topics.json: ms from its launch until the name server
#                  routes the last of them (the broker's start and its
#                  registration), the topics the name server then lists, and
#                  both processes' VmRSS 2 s later.
run_ns() {
	local rep=$1 i=$2 name=${NAMES[$2]} pre p g f
	pre=$OUT/$name-r$rep-ns
	if start_system "$rep" "$i" ns ASYNC_FLUSH; then
		"$MQB" probe -n "$NS_ADDR" -t bench_route -create-topic -q 8 -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		sleep 1
		record "$rep" "$name" ns_rss_idle_mb "$(($(rss_kb "$NS_PID") / 1024))"
		for p in ${NS_CONNS//,/ }; do
			sampler_start "$NS_PID" "$pre-route$p-rss"
			bench "$pre-route$p" route -n "$NS_ADDR" -t bench_route -c "$p" -w "$NS_WINDOW" -d "${D}s" -timeout 60s
			sampler_stop
			record "$rep" "$name" "ns_route_qps@$p" "$(field "$pre-route$p.txt" route tps)"
			record "$rep" "$name" "ns_route_p99_ms@$p" "$(field "$pre-route$p.txt" route p99_ms)"
			record "$rep" "$name" "ns_route_rss_mb@$p" "$((${SAMPLED%% *} / 1024))"
		done
		stop_system "$i"
	fi
	for g in ${REG_TOPICS//,/ }; do
		f=$OUT/topics-reg$g.json
		[ -s "$f" ] || topics_json "$f" reg "$g"
		BENCH_TOPICS_JSON=$f start_system "$rep" "$i" ns ASYNC_FLUSH || continue
		FAILED=""
		"$MQB" probe -route -n "$NS_ADDR" -t "$(last_topic reg "$g")" -since "$LAUNCHED" -timeout 300s >"$pre-reg$g.txt" 2>&1 ||
			FAILED="probe: $(tail -1 "$pre-reg$g.txt" | cut -c1-120)"
		sleep 2
		record "$rep" "$name" "ns_reg_ms@$g" "$(sed -n 's/^PROBE route_ms=\([0-9.]*\).*/\1/p' "$pre-reg$g.txt")"
		record "$rep" "$name" "ns_reg_topics@$g" "$(sed -n 's/^PROBE .*ns_topics=\([0-9]*\).*/\1/p' "$pre-reg$g.txt")"
		FAILED=""
		record "$rep" "$name" "ns_reg_ns_rss_mb@$g" "$(($(rss_kb "$NS_PID") / 1024))"
		record "$rep" "$name" "ns_reg_broker_rss_mb@$g" "$(($(rss_kb "$PID") / 1024))"
		stop_system "$i"
	done
}

# run_topics REP IDX: a broker started with T topics of 8 queues (its
# topics.json). A queue's files are made by its first message, so first
# one message to each of the T x 8 queues (one connection, -c x -w in
# flight) and the wait until every queue has its consume queue file:
#   topics_queues_made_s@T   seconds from the first of those sends until
#                            the last file exists (polled every second)
# then, on a broker holding T topics, 1 KiB sends round robin over all
# T x 8 queues (-c/-w, a warm-up, then D seconds):
#   topics_send_tps@T, topics_send_p99_ms@T, topics_send_errs@T (refused or
#   unanswered sends: a broker out of mappings refuses them), and the
#   broker's peak VmRSS, RssAnon and memory mappings (/proc/PID/maps lines)
#   over warm-up and run.
run_topics() {
	local rep=$1 i=$2 name=${NAMES[$2]} pre t f rmax amax mmax t0 made end
	for t in ${TOPICS//,/ }; do
		f=$OUT/topics-tp$t.json
		[ -s "$f" ] || topics_json "$f" tp "$t"
		BENCH_TOPICS_JSON=$f start_system "$rep" "$i" topics ASYNC_FLUSH || continue
		pre=$OUT/$name-r$rep-topics$t
		"$MQB" probe -n "$NS_ADDR" -t "$(last_topic tp "$t")" -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		t0=$(date +%s%N) made=""
		bench "$pre-fill" produce -n "$NS_ADDR" -t tp -topics "$t" -c 1 -w "$((C * W))" -s 1024 -count "$((t * 8))"
		end=$((SECONDS + 300))
		while ((SECONDS < end)); do
			if (($(find "$DIR" -path '*/consumequeue/tp*' -type f 2>/dev/null | wc -l) >= t * 8)); then
				made=$(awk -v a="$t0" -v b="$(date +%s%N)" 'BEGIN{printf "%.1f", (b-a)/1e9}')
				break
			fi
			sleep 1
		done
		FAILED="fewer than $((t * 8)) consume queue files after 300 s"
		record "$rep" "$name" "topics_queues_made_s@$t" "$made"
		sampler_start "$PID" "$pre-rss"
		bench "$pre-warm" produce -n "$NS_ADDR" -t tp -topics "$t" -c "$C" -w "$W" -s 1024 -d "${WARM}s"
		bench "$pre" produce -n "$NS_ADDR" -t tp -topics "$t" -c "$C" -w "$W" -s 1024 -d "${D}s"
		sampler_stop
		read -r rmax amax mmax <<<"$SAMPLED"
		record "$rep" "$name" "topics_send_tps@$t" "$(field "$pre.txt" send tps)"
		record "$rep" "$name" "topics_send_p99_ms@$t" "$(field "$pre.txt" send p99_ms)"
		record "$rep" "$name" "topics_send_errs@$t" "$(field "$pre.txt" send errs)"
		FAILED=""
		if ((rmax == 0)); then # never sampled: the broker was gone
			FAILED="broker not running"
			rmax="" amax="" mmax=""
		fi
		record "$rep" "$name" "topics_rss_mb@$t" "${rmax:+$((rmax / 1024))}"
		record "$rep" "$name" "topics_rss_anon_mb@$t" "${amax:+$((amax / 1024))}"
		record "$rep" "$name" "topics_maps@$t" "$mmax"
		stop_system "$i"
	done
}

# run_conns REP IDX: K idle client connections to the broker (mqbench idle:
# each sends a producer HEART_BEAT when it opens and every 30 s), then the
# send load of the base rows (1 KiB, -c/-w, D seconds) beside them:
#   conns_rss_mb@K            the broker's VmRSS with them open, 2 s after
#   conns_rss_per_conn_kb@K   (that - VmRSS before they opened) / K
#   conns_send_tps@K, conns_send_p99_ms@K   the active clients' sends
#   conns_closed@K            idle connections the broker closed meanwhile
run_conns() {
	local rep=$1 i=$2 name=${NAMES[$2]} pre k rss0 rss1 idle_pid end
	for k in ${IDLE//,/ }; do
		pre=$OUT/$name-r$rep-conns$k
		if ((k + 256 > $(ulimit -n))); then
			FAILED="open files limit $(ulimit -n)"
			for m in rss_mb rss_per_conn_kb send_tps send_p99_ms closed; do record "$rep" "$name" "conns_$m@$k" ""; done
			continue
		fi
		start_system "$rep" "$i" conns ASYNC_FLUSH || continue
		"$MQB" probe -n "$NS_ADDR" -t bench_conns -create-topic -q 8 -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		sleep 1
		rss0=$(rss_kb "$PID")
		idle_pid=""
		FAILED=""
		if ((k > 0)); then
			"$MQB" idle -broker "127.0.0.1:$BP" -c "$k" -d 24h >"$pre-idle.txt" 2>&1 &
			idle_pid=$!
			end=$((SECONDS + 120))
			until grep -q '^IDLE open=' "$pre-idle.txt" || ((SECONDS > end)) || ! kill -0 "$idle_pid" 2>/dev/null; do sleep 0.2; done
			grep -q "^IDLE open=$k failed=0" "$pre-idle.txt" ||
				FAILED="idle: $(grep -E '^IDLE|failure|mqbench' "$pre-idle.txt" | tail -1 | cut -c1-120)"
			sleep 2
		fi
		rss1=$(rss_kb "$PID")
		if [ -z "$FAILED" ]; then
			record "$rep" "$name" "conns_rss_mb@$k" "$((rss1 / 1024))"
			((k > 0)) && record "$rep" "$name" "conns_rss_per_conn_kb@$k" "$(awk -v a="$rss0" -v b="$rss1" -v k="$k" 'BEGIN{printf "%.2f", (b-a)/k}')"
		else
			record "$rep" "$name" "conns_rss_mb@$k" ""
			((k > 0)) && record "$rep" "$name" "conns_rss_per_conn_kb@$k" ""
		fi
		bench "$pre" produce -n "$NS_ADDR" -t bench_conns -c "$C" -w "$W" -s 1024 -d "${D}s"
		record "$rep" "$name" "conns_send_tps@$k" "$(field "$pre.txt" send tps)"
		record "$rep" "$name" "conns_send_p99_ms@$k" "$(field "$pre.txt" send p99_ms)"
		if [ -n "$idle_pid" ]; then
			kill -TERM "$idle_pid" 2>/dev/null || true
			wait "$idle_pid" 2>/dev/null || true
			FAILED="idle: no end line"
			record "$rep" "$name" "conns_closed@$k" "$(sed -n 's/^IDLE alive=[0-9]* closed=\([0-9]*\).*/\1/p' "$pre-idle.txt")"
		fi
		stop_system "$i"
	done
}

# drop_cache: writes dirty pages and empties the page cache (root only), so
# that what follows reads the store from the disk; false when not allowed.
drop_cache() {
	sync
	{ echo 3 >/proc/sys/vm/drop_caches; } 2>/dev/null
}

# run_backlog REP IDX: for each B of BACKLOG (GiB), on a fresh store:
#   backlog_fill_mibps@B      B GiB of 16 KiB messages sent to one topic
#                             of 8 queues as fast as the system takes them
#                             (-c/-w), ASYNC_FLUSH
#   backlog_recovery_ms@B     kill -9 of the broker, the page cache
#                             emptied, the name server restarted: ms from
#                             the broker's launch on the same store to its
#                             first accepted send (recovery, then
#                             registration)
#   backlog_catchup_mibps@B, backlog_catchup_tps@B
#                             the page cache emptied again, one consumer
#                             group reads the whole backlog from the start
#                             (-c workers, 32 messages a pull)
#   backlog_live_p99_ms@B, backlog_live_tps@B
#                             meanwhile 1 KiB sends at LIVE_RATE msgs/s to
#                             another topic: the live traffic's p99 and the
#                             rate it got
# Without root the page cache cannot be emptied: the recovery and catch-up
# cells then say so.
LIVE_RATE=${LIVE_RATE:-2000}
run_backlog() {
	local rep=$1 i=$2 name=${NAMES[$2]} script=${SCRIPTS[$2]} pre b n out live_pid cold
	for b in ${BACKLOG//,/ }; do
		n=$((b * 65536)) # 16 KiB messages
		start_system "$rep" "$i" backlog ASYNC_FLUSH || continue
		pre=$OUT/$name-r$rep-backlog$b
		"$MQB" probe -n "$NS_ADDR" -t bench_backlog -create-topic -q 8 -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		bench "$pre-fill" produce -n "$NS_ADDR" -t bench_backlog -c "$C" -w "$W" -s 16384 -count "$n"
		record "$rep" "$name" "backlog_fill_mibps@$b" "$(field "$pre-fill.txt" send mibps)"
		kill -KILL "$PID" 2>/dev/null || true
		while kill -0 "$PID" 2>/dev/null; do sleep 0.1; done
		rm -f "$DIR/broker.pid"
		"$script" stop "$DIR" >/dev/null 2>&1 || true
		cold=1
		drop_cache || cold=0
		FAILED=""
		if ! out=$("$script" start "$DIR" "${NS_ADDR##*:}" "$BP" ASYNC_FLUSH 2>>"$DIR/start.err"); then
			FAILED="restart failed: $(tail -1 "$DIR/start.err" | cut -c1-120)"
			for m in recovery_ms catchup_mibps catchup_tps live_p99_ms live_tps; do record "$rep" "$name" "backlog_$m@$b" ""; done
			stop_system "$i"
			continue
		fi
		PID=$(sed -n 's/.*broker_pid=\([0-9]*\).*/\1/p' <<<"$out")
		LAUNCHED=$(sed -n 's/.*launched_ns=\([0-9]*\).*/\1/p' <<<"$out")
		"$MQB" probe -n "$NS_ADDR" -t bench_live -create-topic -q 8 -since "$LAUNCHED" -timeout 600s >"$pre-recovery.txt" 2>&1 ||
			FAILED="probe: $(tail -1 "$pre-recovery.txt" | cut -c1-120)"
		((cold)) || FAILED="page cache not emptied (not root)"
		((cold)) && record "$rep" "$name" "backlog_recovery_ms@$b" "$(sed -n 's/PROBE first_send_ms=//p' "$pre-recovery.txt")" ||
			record "$rep" "$name" "backlog_recovery_ms@$b" ""
		drop_cache || cold=0
		"$MQB" produce -n "$NS_ADDR" -t bench_live -c 2 -w 8 -s 1024 -rate "$LIVE_RATE" -d 24h >"$pre-live.txt" 2>&1 &
		live_pid=$!
		bench "$pre-catchup" consume -n "$NS_ADDR" -t bench_backlog -c "$C" -w 4 -count "$n"
		kill -INT "$live_pid" 2>/dev/null || true
		wait "$live_pid" 2>/dev/null || true
		((cold)) || FAILED="page cache not emptied (not root)"
		if ((cold)); then
			record "$rep" "$name" "backlog_catchup_mibps@$b" "$(field "$pre-catchup.txt" pull mibps)"
			record "$rep" "$name" "backlog_catchup_tps@$b" "$(field "$pre-catchup.txt" pull tps)"
		else
			record "$rep" "$name" "backlog_catchup_mibps@$b" ""
			record "$rep" "$name" "backlog_catchup_tps@$b" ""
		fi
		FAILED="live sender: no summary"
		record "$rep" "$name" "backlog_live_p99_ms@$b" "$(sed -n 's/^SUMMARY role=send .* p99_ms=\([0-9.]*\).*/\1/p' "$pre-live.txt" | tail -1)"
		record "$rep" "$name" "backlog_live_tps@$b" "$(sed -n 's/^SUMMARY role=send .* tps=\([0-9.]*\).*/\1/p' "$pre-live.txt" | tail -1)"
		stop_system "$i"
	done
}

# run_groups REP IDX: for each G of GROUP_COUNTS (-g), on a fresh store holding 20,000
# messages of 1 KiB in one topic of 8 queues, G consumer groups read it
# over and over (mqbench consume -groups G -loop) for D seconds, each group
# on its own connection with one pull of 32 messages in flight per queue,
# as a push consumer pulls:
#   groups_pull_tps@G     messages read per second, all groups together
#   groups_pull_p99_ms@G  pull round trip p99
#   groups_rss_mb@G       the broker's peak VmRSS meanwhile
run_groups() {
	local rep=$1 i=$2 name=${NAMES[$2]} pre g rmax
	for g in ${GROUP_COUNTS//,/ }; do
		start_system "$rep" "$i" groups ASYNC_FLUSH || continue
		pre=$OUT/$name-r$rep-groups$g
		"$MQB" probe -n "$NS_ADDR" -t bench_groups -create-topic -q 8 -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		bench "$pre-fill" produce -n "$NS_ADDR" -t bench_groups -c "$C" -w "$W" -s 1024 -count 20000
		sampler_start "$PID" "$pre-rss"
		bench "$pre" consume -n "$NS_ADDR" -t bench_groups -g "bench_g$rep" -groups "$g" -loop -c "$g" -w 1 -d "${D}s"
		sampler_stop
		read -r rmax _ <<<"$SAMPLED"
		record "$rep" "$name" "groups_pull_tps@$g" "$(field "$pre.txt" pull tps)"
		record "$rep" "$name" "groups_pull_p99_ms@$g" "$(field "$pre.txt" pull p99_ms)"
		FAILED="broker not running" # when never sampled
		((rmax > 0)) || rmax=""
		record "$rep" "$name" "groups_rss_mb@$g" "${rmax:+$((rmax / 1024))}"
		stop_system "$i"
	done
}

# run_lite REP IDX: L lite topics (Apache 5.5, RIP-83) under one LITE parent
# of 8 queues, on a broker with enableLmq and enableMultiDispatch and its
# LMQ, subscription and client event quotas at 2 L (with the default of 100
# events a client, a client subscribed to more lite topics with messages
# than that gets the rest by the full dispatch, 10 s later: the pops would
# measure that delay); 1 KiB messages:
#   lite_create_tps@L        L sends, one to each lite topic (each makes its
#                            lite topic's queue): messages/s
#   lite_pop_tps@L           those L messages popped (POP_LITE_MESSAGE, 32 at
#                            most) and acked one by one, as the proxy does, by
#                            C clients subscribed to L/C lite topics each
#   lite_pop_p99_ms@L        the pops' round trip
#   lite_heap_b_per_lite@L   the broker's live heap after a collection (the
#                            start script's heap command), after minus before
#                            the lite topics, over L: a lite topic made,
#                            subscribed and consumed, held idle
#   lite_send_tps@L, lite_send_p99_ms@L   D seconds of sends round robin
#                            over the L lite topics (-c/-w)
#   lite_rss_mb@L, lite_maps@L   the broker's peak VmRSS and mappings through
#                            all of it
# A start script without a heap command gets n/a: the row is for systems
# that serve lite topics.
run_lite() {
	local rep=$1 i=$2 name=${NAMES[$2]} script=${SCRIPTS[$2]} pre l h0 h1 rmax mmax m
	for l in ${LITES//,/ }; do
		if ! grep -q '^heap)' "$script"; then
			FAILED="$(basename "$script") has no heap command"
			for m in create_tps pop_tps pop_p99_ms heap_b_per_lite send_tps send_p99_ms rss_mb maps; do record "$rep" "$name" "lite_$m@$l" ""; done
			continue
		fi
		start_system "$rep" "$i" lite ASYNC_FLUSH enableLmq=true enableMultiDispatch=true \
			"maxLmqConsumeQueueNum=$((2 * l))" "maxLiteSubscriptionCount=$((2 * l))" "maxClientEventCount=$((2 * l))" || continue
		pre=$OUT/$name-r$rep-lite$l
		"$MQB" probe -n "$NS_ADDR" -t bench_probe -create-topic -q 1 -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		h0=$("$script" heap "$DIR" 2>"$pre-heap.err" || true)
		sampler_start "$PID" "$pre-rss"
		bench "$pre-create" produce -n "$NS_ADDR" -t bench_lite -create-topic -q 8 -lite "$l" -count "$l" -c "$C" -w "$W" -s 1024
		record "$rep" "$name" "lite_create_tps@$l" "$(field "$pre-create.txt" send tps)"
		# -count ends it; timeout (SIGTERM: mqbench prints its summary) when
		# a system never hands out all of them.
		FAILED=""
		local popped rc=0
		timeout 600 "$MQB" lite-consume -n "$NS_ADDR" -t bench_lite -g bench_lite_g -lite "$l" -count "$l" -c "$C" \
			-csv "$pre-pop.csv" -plot "$pre-pop.svg" >"$pre-pop.txt" 2>&1 || rc=$?
		popped=$(sed -n 's/^SUMMARY role=pop msgs=\([0-9]*\).*/\1/p' "$pre-pop.txt" | tail -1)
		if ((rc == 124)); then
			FAILED="popped ${popped:-0} of $l in 600 s"
		elif ((rc != 0)); then
			FAILED="lite-consume: $(tail -1 "$pre-pop.txt" | cut -c1-120)"
		fi
		if [ -z "$FAILED" ] && [ "${popped:-0}" -ge "$l" ]; then
			record "$rep" "$name" "lite_pop_tps@$l" "$(field "$pre-pop.txt" pop tps)"
			record "$rep" "$name" "lite_pop_p99_ms@$l" "$(field "$pre-pop.txt" pop p99_ms)"
		else
			FAILED=${FAILED:-"popped ${popped:-0} of $l in 600 s"}
			record "$rep" "$name" "lite_pop_tps@$l" ""
			record "$rep" "$name" "lite_pop_p99_ms@$l" ""
		fi
		sleep 10 # what the broker still makes in the background (queue files) counts
		h1=$("$script" heap "$DIR" 2>>"$pre-heap.err" || true)
		FAILED="heap: $(tail -1 "$pre-heap.err" 2>/dev/null | cut -c1-120)"
		if [ -n "$h0" ] && [ -n "$h1" ]; then
			record "$rep" "$name" "lite_heap_b_per_lite@$l" "$(awk -v a="$h0" -v b="$h1" -v l="$l" 'BEGIN{printf "%.0f", (b-a)/l}')"
		else
			record "$rep" "$name" "lite_heap_b_per_lite@$l" ""
		fi
		bench "$pre" produce -n "$NS_ADDR" -t bench_lite -lite "$l" -c "$C" -w "$W" -s 1024 -d "${D}s"
		record "$rep" "$name" "lite_send_tps@$l" "$(field "$pre.txt" send tps)"
		record "$rep" "$name" "lite_send_p99_ms@$l" "$(field "$pre.txt" send p99_ms)"
		sampler_stop
		read -r rmax _ mmax <<<"$SAMPLED"
		FAILED="broker not running" # when never sampled
		((rmax > 0)) || rmax="" mmax=""
		record "$rep" "$name" "lite_rss_mb@$l" "${rmax:+$((rmax / 1024))}"
		record "$rep" "$name" "lite_maps@$l" "$mmax"
		stop_system "$i"
	done
}

# run_e2e REP IDX: end-to-end latency at fixed rates. For each R of
# E2E_RATES (messages/s), on a fresh start: a warm-up, then D seconds of
# 1 KiB messages at R with a push-style consumer reading them (mqbench e2e)
# on a topic the run creates, then D seconds more on the same topic, warm:
#   e2e_new_first_ms@R       creation of the topic to its first message consumed
#   e2e_new_p99_ms@R, e2e_new_worst_s_p99_ms@R
#                            send-to-consume p99 over the run, and of its worst second
#   e2e_p50_ms@R, e2e_p99_ms@R, e2e_p999_ms@R, e2e_worst_s_p99_ms@R
#                            the same topic warm
#   e2e_tps@R                messages consumed per second warm (the rate kept)
# The per-second CSVs (OUT/NAME-rREP-ASYNC-e2e<R>.csv and -e2ew<R>.csv)
# are what bench/e2e_plot.py -rates draws.
run_e2e() {
	local rep=$1 i=$2 name=${NAMES[$2]} pre r
	for r in ${E2E_RATES//,/ }; do
		start_system "$rep" "$i" e2e ASYNC_FLUSH || continue
		pre=$OUT/$name-r$rep-ASYNC
		"$MQB" probe -n "$NS_ADDR" -t bench_probe -create-topic -q 1 -since "$LAUNCHED" -timeout 120s >"$pre-e2eprobe$r.txt" 2>&1 || true
		bench "$pre-e2ewarm$r" produce -n "$NS_ADDR" -t bench_warm -create-topic -c "$C" -w "$W" -s 1024 -d "${WARM}s"
		bench "$pre-e2e$r" e2e -n "$NS_ADDR" -t bench_e2e -create-topic -c "$C" -w "$W" -s 1024 -rate "$r" -d "${D}s"
		record "$rep" "$name" "e2e_new_first_ms@$r" "$(first "$pre-e2e$r.txt" first_consumed_ms)"
		record "$rep" "$name" "e2e_new_p99_ms@$r" "$(field "$pre-e2e$r.txt" e2e p99_ms)"
		record "$rep" "$name" "e2e_new_worst_s_p99_ms@$r" "$(field "$pre-e2e$r.txt" e2e worst_p99_ms)"
		bench "$pre-e2ew$r" e2e -n "$NS_ADDR" -t bench_e2e -c "$C" -w "$W" -s 1024 -rate "$r" -d "${D}s"
		record "$rep" "$name" "e2e_p50_ms@$r" "$(field "$pre-e2ew$r.txt" e2e p50_ms)"
		record "$rep" "$name" "e2e_p99_ms@$r" "$(field "$pre-e2ew$r.txt" e2e p99_ms)"
		record "$rep" "$name" "e2e_p999_ms@$r" "$(field "$pre-e2ew$r.txt" e2e p999_ms)"
		record "$rep" "$name" "e2e_worst_s_p99_ms@$r" "$(field "$pre-e2ew$r.txt" e2e worst_p99_ms)"
		record "$rep" "$name" "e2e_tps@$r" "$(field "$pre-e2ew$r.txt" e2e tps)"
		stop_system "$i"
	done
}

# run_pop REP IDX: K simple consumers through the system's gRPC proxy (the
# start script's proxy command, cluster mode), each as a 5.x SDK process
# runs one: a connection and client id of its own, its settings on a
# Telemetry stream, heartbeats, then ReceiveMessage (16 at most, invisible
# 30 s, 5 s long poll) and one AckMessage per receive (mqbench grpc-pop).
# For each K of POP_COUNTS (-O), on a fresh start (timerWheelEnable=true:
# Apache's broker refuses pops without its timer, and apache.sh turns it
# off): max(100 K, POP_MIN_MSGS) messages of 1 KiB sent first to one topic
# of 8 queues, the proxy started, the group created
# (UPDATE_AND_CREATE_SUBSCRIPTIONGROUP on the broker), then the K
# consumers receive and ack until every message stored is acked (600 s at
# most, else n/a with the count acked):
#   pop_tps@K            messages acked per second, all consumers together
#                        (from the first receive to the last ack)
#   pop_p99_ms@K         ReceiveMessage round trip p99, empty long polls
#                        included (a consumer left waiting 5 s while
#                        messages wait shows here)
#   pop_proxy_rss_mb@K, pop_rss_mb@K   the proxy's and the broker's peak
#                        VmRSS meanwhile (consumers' start included)
# A start script without a proxy command gets n/a: the row is for systems
# with a gRPC proxy.
run_pop() {
	local rep=$1 i=$2 name=${NAMES[$2]} script=${SCRIPTS[$2]} pre k m gp out proxy_pid psampler prmax brmax acked rc metric
	for k in ${POP_COUNTS//,/ }; do
		if ! grep -q '^proxy)' "$script"; then
			FAILED="no gRPC proxy: $(basename "$script") has no proxy command"
			for metric in tps p99_ms proxy_rss_mb rss_mb; do record "$rep" "$name" "pop_$metric@$k" ""; done
			continue
		fi
		start_system "$rep" "$i" pop ASYNC_FLUSH timerWheelEnable=true || continue
		pre=$OUT/$name-r$rep-pop$k
		m=$((100 * k > POP_MIN_MSGS ? 100 * k : POP_MIN_MSGS))
		"$MQB" probe -n "$NS_ADDR" -t bench_probe -create-topic -q 1 -since "$LAUNCHED" -timeout 120s >"$pre-probe.txt" 2>&1 || true
		bench "$pre-fill" produce -n "$NS_ADDR" -t bench_pop -create-topic -q 8 -c "$C" -w "$W" -s 1024 -count "$m"
		# A send the broker refused (busy) is not there to pop: the
		# consumers ack what was stored.
		m=$(sed -n 's/^SUMMARY role=send msgs=\([0-9]*\).*/\1/p' "$pre-fill.txt" | tail -1)
		if ((${m:-0} == 0)); then
			FAILED="fill: nothing stored${FAILED:+ ($FAILED)}"
			for metric in tps p99_ms proxy_rss_mb rss_mb; do record "$rep" "$name" "pop_$metric@$k" ""; done
			stop_system "$i"
			continue
		fi
		# The proxy finds the topic through the name server: wait for its route.
		"$MQB" probe -route -n "$NS_ADDR" -t bench_pop -timeout 60s >"$pre-route.txt" 2>&1 || true
		gp=$(pick_ports 1)
		FAILED=""
		if ! out=$("$script" proxy "$DIR" "${NS_ADDR##*:}" "$gp" 2>"$DIR/proxy.err"); then
			FAILED="proxy start failed: $(tail -1 "$DIR/proxy.err" | cut -c1-120)"
			log "$name rep $rep: pop$k $FAILED"
			for metric in tps p99_ms proxy_rss_mb rss_mb; do record "$rep" "$name" "pop_$metric@$k" ""; done
			stop_system "$i"
			continue
		fi
		proxy_pid=$(sed -n 's/.*proxy_pid=\([0-9]*\).*/\1/p' <<<"$out")
		: >"$pre-proxy-rss"
		sample_rss "$proxy_pid" "$pre-proxy-rss" &
		psampler=$!
		sampler_start "$PID" "$pre-rss"
		# -count ends it, -d when a system never hands out all of them;
		# timeout when it hangs past that (SIGTERM: mqbench still prints
		# its summary).
		rc=0
		timeout 900 "$MQB" grpc-pop -proxy "127.0.0.1:$gp" -n "$NS_ADDR" -t bench_pop -g bench_pop_g -c "$k" -count "$m" -d 600s \
			-csv "$pre.csv" -plot "$pre.svg" >"$pre.txt" 2>&1 || rc=$?
		sampler_stop
		read -r brmax _ <<<"$SAMPLED"
		kill "$psampler" 2>/dev/null || true
		wait "$psampler" 2>/dev/null || true
		rm -f "$pre-proxy-rss.tmp"
		read -r prmax _ <"$pre-proxy-rss" || prmax=0
		acked=$(sed -n 's/^SUMMARY role=pop msgs=\([0-9]*\).*/\1/p' "$pre.txt" | tail -1)
		if ((rc != 0)); then
			FAILED="grpc-pop: $(grep -v '^ *[0-9.]* [a-z2]* ' "$pre.txt" | tail -1 | cut -c1-120)"
		elif ((${acked:-0} < m)); then
			FAILED="acked ${acked:-0} of $m in 600 s$(grep -m1 '^# errors' "$pre.txt" | sed 's/^# errors /; /' | cut -c1-120)"
		fi
		if [ -z "$FAILED" ]; then
			record "$rep" "$name" "pop_tps@$k" "$(field "$pre.txt" pop tps)"
			record "$rep" "$name" "pop_p99_ms@$k" "$(field "$pre.txt" pop p99_ms)"
		else
			log "$name rep $rep: pop$k $FAILED"
			record "$rep" "$name" "pop_tps@$k" ""
			record "$rep" "$name" "pop_p99_ms@$k" ""
		fi
		FAILED="proxy not running" # when never sampled
		((${prmax:-0} > 0)) || prmax=""
		record "$rep" "$name" "pop_proxy_rss_mb@$k" "${prmax:+$((prmax / 1024))}"
		FAILED="broker not running"
		((brmax > 0)) || brmax=""
		record "$rep" "$name" "pop_rss_mb@$k" "${brmax:+$((brmax / 1024))}"
		stop_system "$i"
	done
}
