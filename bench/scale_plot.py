#!/usr/bin/env python3
"""Curves of compare.sh's scale rows, one SVG per row.

    bench/scale_plot.py OUT [NAME ...] [-o DIR]

Reads OUT/results.tsv, takes the metrics named MEASURE@X (X: connections,
topics, GiB, groups, lite topics, messages per second or gRPC consumers) and draws, per row, one panel per measure: the median over the
repetitions against X, one line per system (NAMEs in the order given; by
default every system in the file). A point a system could not measure is
left out (its line breaks there). X is spaced evenly, labelled with its
values; latency and time panels use a log scale. Writes DIR/scale-ROW.svg
(DIR defaults to OUT) for ROW in ns-route, ns-register, topics, conns, backlog, groups, lite, e2e, pop, and
prints the files written.
"""
import collections
import math
import os
import statistics
import sys

ROWS = [
    ("ns-route", "Name server: route queries (GET_ROUTEINFO_BY_TOPIC)", "client connections", [
        ("ns_route_qps", "queries/s", False),
        ("ns_route_p99_ms", "p99 (ms)", True),
        ("ns_route_rss_mb", "name server VmRSS (MB)", False)]),
    ("ns-register", "Name server: a broker with X topics registers", "topics (8 queues each)", [
        ("ns_reg_ms", "broker launch to last topic routed (ms)", True),
        ("ns_reg_ns_rss_mb", "name server VmRSS (MB)", False),
        ("ns_reg_broker_rss_mb", "broker VmRSS (MB)", False)]),
    ("topics", "Send over X topics round robin (1 KiB)", "topics (8 queues each)", [
        ("topics_send_tps", "send TPS", False),
        ("topics_send_p99_ms", "send p99 (ms)", True),
        ("topics_rss_mb", "broker VmRSS (MB)", False),
        ("topics_maps", "broker memory mappings", True),
        ("topics_queues_made_s", "first message to each queue until all are made (s)", True)]),
    ("conns", "Send beside X idle client connections (1 KiB)", "idle connections", [
        ("conns_send_tps", "send TPS", False),
        ("conns_send_p99_ms", "send p99 (ms)", True),
        ("conns_rss_mb", "broker VmRSS (MB)", False),
        ("conns_rss_per_conn_kb", "VmRSS per idle connection (KB)", False)]),
    ("backlog", "A backlog of X GiB: recovery after kill -9, cold catch-up beside live sends", "backlog (GiB)", [
        ("backlog_recovery_ms", "launch to first accepted send (ms)", True),
        ("backlog_catchup_mibps", "catch-up read (MiB/s)", False),
        ("backlog_live_p99_ms", "live send p99 (ms)", True),
        ("backlog_fill_mibps", "fill, 16 KiB sends (MiB/s)", False)]),
    ("groups", "X consumer groups reading one topic (1 KiB, hot)", "consumer groups", [
        ("groups_pull_tps", "messages read/s, all groups", False),
        ("groups_pull_p99_ms", "pull p99 (ms)", True),
        ("groups_rss_mb", "broker VmRSS (MB)", False)]),
    ("lite", "X lite topics under one LITE parent (1 KiB)", "lite topics", [
        ("lite_send_tps", "send TPS, round robin", False),
        ("lite_pop_tps", "one message per lite topic popped and acked/s", False),
        ("lite_heap_b_per_lite", "broker heap per lite topic (B)", False),
        ("lite_rss_mb", "broker VmRSS (MB)", False)]),
    ("e2e", "End to end at X messages/s (1 KiB, send to consume)", "messages/s", [
        ("e2e_p50_ms", "warm topic p50 (ms)", True),
        ("e2e_p99_ms", "warm topic p99 (ms)", True),
        ("e2e_worst_s_p99_ms", "warm topic, worst second's p99 (ms)", True),
        ("e2e_new_p99_ms", "new topic p99 (ms)", True),
        ("e2e_new_first_ms", "topic creation to first message consumed (ms)", True)]),
    ("pop", "X simple consumers through the gRPC proxy: receive 16 and ack (1 KiB)", "consumers", [
        ("pop_tps", "messages acked/s, all consumers", False),
        ("pop_p99_ms", "ReceiveMessage p99 (ms)", True),
        ("pop_proxy_rss_mb", "proxy VmRSS (MB)", False),
        ("pop_rss_mb", "broker VmRSS (MB)", False)]),
]
COLORS = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b"]


def load(path):
    vals = collections.defaultdict(list)
    names = []
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 4 or "@" not in parts[2]:
            continue
        _, name, metric, v = parts
        if name not in names:
            names.append(name)
        measure, x = metric.split("@", 1)
        try:
            vals[(measure, name, int(x))].append(float(v))
        except ValueError:
            vals.setdefault((measure, name, int(x)), [])
    return vals, names


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def fmt(v):
    if v >= 1e6:
        return f"{v / 1e6:g}M"
    if v >= 1e3:
        return f"{v / 1e3:g}k"
    return f"{v:g}"


def panel(svg, top, ph, left, pw, xs, series, label, log):
    """series: name -> {x: value}"""
    pts = [v for s in series.values() for v in s.values() if v is not None and (v > 0 or not log)]
    svg.append(f'<text x="{left}" y="{top - 6}">{esc(label)}</text>')
    svg.append(f'<rect x="{left}" y="{top}" width="{pw}" height="{ph}" fill="none" stroke="#999"/>')
    step = pw / max(len(xs), 1)
    x = lambda i: left + step * (i + 0.5)
    for i, xv in enumerate(xs):
        svg.append(f'<text x="{x(i):.1f}" y="{top + ph + 15}" text-anchor="middle">{fmt(xv)}</text>')
    if not pts:
        svg.append(f'<text x="{left + pw / 2}" y="{top + ph / 2}" text-anchor="middle" fill="#999">no values</text>')
        return
    if log:
        lo = 10 ** math.floor(math.log10(min(pts)))
        hi = 10 ** math.ceil(math.log10(max(pts)))
        if hi <= lo:
            hi = lo * 10
        y = lambda v: top + ph - ph * (math.log10(max(v, lo)) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
        ticks, d = [], lo
        while d <= hi * 1.0001:
            ticks.append(d)
            d *= 10
    else:
        hi = max(pts) * 1.1 or 1
        mag = 10 ** math.floor(math.log10(hi))
        hi = math.ceil(hi / mag) * mag
        y = lambda v: top + ph - ph * v / hi
        ticks = [hi * k / 4 for k in range(5)]
    for t in ticks:
        svg.append(f'<line x1="{left}" x2="{left + pw}" y1="{y(t):.1f}" y2="{y(t):.1f}" stroke="#eee"/>')
        svg.append(f'<text x="{left - 6}" y="{y(t) + 4:.1f}" text-anchor="end">{fmt(t)}</text>')
    for k, (name, s) in enumerate(series.items()):
        col = COLORS[k % len(COLORS)]
        run = []
        for i, xv in enumerate(xs + [None]):
            v = s.get(xv)
            if v is not None and (v > 0 or not log):
                run.append((x(i), y(v)))
                svg.append(f'<circle cx="{x(i):.1f}" cy="{y(v):.1f}" r="3" fill="{col}"/>')
                continue
            if len(run) > 1:
                p = " ".join(f"{a:.1f},{b:.1f}" for a, b in run)
                svg.append(f'<polyline points="{p}" fill="none" stroke="{col}" stroke-width="2"/>')
            run = []


def main():
    args = sys.argv[1:]
    out_dir = None
    if "-o" in args:
        i = args.index("-o")
        out_dir = args[i + 1]
        del args[i:i + 2]
    if not args:
        sys.exit(__doc__)
    out = args[0]
    vals, found = load(os.path.join(out, "results.tsv"))
    names = args[1:] or found
    out_dir = out_dir or out
    W, PH, L, R, T, GAP = 900, 200, 80, 170, 50, 60
    for row, title, xlabel, measures in ROWS:
        xs = sorted({x for (m, _, x) in vals if m in {mm for mm, _, _ in measures}})
        if not xs:
            continue
        H = T + len(measures) * (PH + GAP)
        svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
               f'<rect width="{W}" height="{H}" fill="white"/>',
               f'<text x="{L}" y="22" font-size="15">{esc(title)}; x: {esc(xlabel)}</text>']
        for pi, (m, label, log) in enumerate(measures):
            series = {}
            for n in names:
                series[n] = {x: (statistics.median(vals[(m, n, x)]) if vals.get((m, n, x)) else None) for x in xs}
            top = T + pi * (PH + GAP) + 20
            panel(svg, top, PH, L, W - L - R, xs, series, label + (" (log)" if log else ""), log)
        for k, n in enumerate(names):
            ly = T + 30 + 18 * k
            col = COLORS[k % len(COLORS)]
            svg.append(f'<line x1="{W - R + 15}" x2="{W - R + 35}" y1="{ly}" y2="{ly}" stroke="{col}" stroke-width="2"/>')
            svg.append(f'<text x="{W - R + 40}" y="{ly + 4}">{esc(n)}</text>')
        svg.append("</svg>")
        path = os.path.join(out_dir, f"scale-{row}.svg")
        with open(path, "w") as fh:
            fh.write("\n".join(svg) + "\n")
        print(path)


if __name__ == "__main__":
    main()
