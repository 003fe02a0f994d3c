#!/usr/bin/env python3
"""Per-second end-to-end p99 of brokers from a compare.sh output dir.

    bench/e2e_plot.py OUT [NAME ...] [-rates R1,R2,...] [-o FILE.svg]

Reads OUT/<name>-r<rep>-ASYNC-e2e.csv (new topic) and -e2ew.csv (the same
topic, warm) that mqbench -csv wrote, and draws one panel per phase: the
e2e role's p99 per interval, one line per broker and repetition, log scale.
With -rates, the e2e row group's files instead (-e2e<R>.csv, -e2ew<R>.csv):
two panels per rate.
NAMEs default to rocketgo and apache.
Writes OUT/e2e_p99.svg unless -o is given.
"""
import csv, glob, math, os, sys

args = [a for a in sys.argv[1:]]
out_file = None
if "-o" in args:
    i = args.index("-o")
    out_file = args[i + 1]
    del args[i:i + 2]
rates = []
if "-rates" in args:
    i = args.index("-rates")
    rates = [r for r in args[i + 1].split(",") if r]
    del args[i:i + 2]
if not args:
    sys.exit(__doc__)
out = args[0]
names = args[1:] or ["rocketgo", "apache"]
out_file = out_file or os.path.join(out, "e2e_p99.svg")
palette = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e"]
colors = {n: palette[i % len(palette)] for i, n in enumerate(names)}


def series(name, suffix):
    runs = []
    for f in sorted(glob.glob(os.path.join(out, f"{name}-r*-ASYNC-{suffix}.csv"))):
        pts = []
        with open(f) as fh:
            for r in csv.DictReader(fh):
                if r["role"] == "e2e":
                    pts.append((float(r["time_s"]), max(float(r["p99_ms"]), 0.01)))
        if pts:
            runs.append(pts)
    return runs


panels = [("new topic (created by the run)", "e2e"), ("same topic, warm", "e2ew")]
if rates:
    panels = [p for r in rates for p in ((f"{int(r):,} msgs/s, new topic", f"e2e{r}"),
                                         (f"{int(r):,} msgs/s, same topic, warm", f"e2ew{r}"))]
W, PH, L, R, T, GAP = 900, 260, 70, 160, 40, 50
H = T + len(panels) * (PH + GAP)
data = {(n, s): series(n, s) for n in names for _, s in panels}
allv = [v for runs in data.values() for pts in runs for _, v in pts]
allt = [t for runs in data.values() for pts in runs for t, _ in pts]
if not allv:
    sys.exit(f"no e2e CSV files under {out}")
lo = 10 ** math.floor(math.log10(min(allv)))
hi = 10 ** math.ceil(math.log10(max(allv)))
tmax = max(allt)
svg = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="12">',
       f'<rect width="{W}" height="{H}" fill="white"/>',
       f'<text x="{L}" y="22" font-size="14">end-to-end p99 per second (ms, log scale): {" vs ".join(names)}</text>']
for pi, (title, suffix) in enumerate(panels):
    top = T + pi * (PH + GAP) + 20
    x = lambda t: L + (W - L - R) * t / tmax
    y = lambda v: top + PH - PH * (math.log10(v) - math.log10(lo)) / (math.log10(hi) - math.log10(lo))
    svg.append(f'<text x="{L}" y="{top - 6}">{title}</text>')
    svg.append(f'<rect x="{L}" y="{top}" width="{W - L - R}" height="{PH}" fill="none" stroke="#999"/>')
    d = lo
    while d <= hi * 1.0001:
        svg.append(f'<line x1="{L}" x2="{W - R}" y1="{y(d):.1f}" y2="{y(d):.1f}" stroke="#eee"/>')
        svg.append(f'<text x="{L - 6}" y="{y(d) + 4:.1f}" text-anchor="end">{d:g}</text>')
        d *= 10
    for s in range(0, int(tmax) + 1, max(1, int(tmax) // 10)):
        svg.append(f'<text x="{x(s):.1f}" y="{top + PH + 15}" text-anchor="middle">{s}s</text>')
    for n in names:
        for runs_i, pts in enumerate(data[(n, suffix)]):
            p = " ".join(f"{x(t):.1f},{y(v):.1f}" for t, v in pts)
            svg.append(f'<polyline points="{p}" fill="none" stroke="{colors[n]}" stroke-width="1.5" opacity="0.8"/>')
    for k, n in enumerate(names):
        ly = top + 20 + 18 * k
        svg.append(f'<line x1="{W - R + 10}" x2="{W - R + 30}" y1="{ly}" y2="{ly}" stroke="{colors[n]}" stroke-width="2"/>')
        svg.append(f'<text x="{W - R + 35}" y="{ly + 4}">{n}</text>')
svg.append("</svg>")
with open(out_file, "w") as fh:
    fh.write("\n".join(svg) + "\n")
print(out_file)
