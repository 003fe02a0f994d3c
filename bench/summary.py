#!/usr/bin/env python3
"""Medians per metric and system of a compare.sh run, and ratios.

    bench/summary.py OUT NAME [NAME ...]

Reads OUT/results.tsv (rep, system, metric, value), prints one line per
metric: each system's median over the repetitions, then the ratio of the
first system's median to each other's; writes the same as a Markdown table
to OUT/summary.md. A cell without a number says why: the value recorded in
its place ("n/a (mqbench ...)"), else the failed start of its row group
(metric "_failed:<group>"), else "n/a (not run)". The text table shortens
those to "n/a" and lists the reasons below it. With the base rows' SYNC_FLUSH
bandwidth and OUT/disk_mbps, OUT/disk_direct_mbps present, the bandwidth's
share of the disk follows.
"""
import collections
import os
import statistics
import sys

GROUPS = ("ns", "topics", "conns", "backlog", "groups", "lite", "e2e", "pop")


def group_of(metric):
    g = metric.split("_", 1)[0]
    if g == "e2e" and "@" not in metric:
        return "base"  # the base rows' e2e_* at one rate; the e2e group's are e2e_*@RATE
    return g if g in GROUPS else "base"


def load(path):
    nums = collections.defaultdict(list)
    notes = {}
    order = []
    for line in open(path):
        parts = line.rstrip("\n").split("\t")
        if len(parts) != 4:
            continue
        _, name, metric, v = parts
        if not metric.startswith("_") and metric not in order:
            order.append(metric)
        try:
            nums[(name, metric)].append(float(v))
        except ValueError:
            notes.setdefault((name, metric), v)
    return nums, notes, order


def cell(nums, notes, name, metric):
    """(number or None, text)"""
    v = nums.get((name, metric))
    if v:
        m = statistics.median(v)
        return m, f"{m:.3f}" if abs(m) < 1000 else f"{m:,.0f}"
    note = notes.get((name, metric)) or notes.get((name, "_failed:" + group_of(metric)))
    return None, note or "n/a (not run)"


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    out, names = sys.argv[1], sys.argv[2:]
    nums, notes, order = load(os.path.join(out, "results.tsv"))
    first, others = names[0], names[1:]
    head = ["metric"] + names + [f"{first}/{o}" for o in others]
    width = max([28] + [len(m) for m in order])
    print(f"{head[0]:{width}} " + " ".join(f"{h:>14}" for h in head[1:]))
    md = ["| " + " | ".join(head) + " |", "|---" + "|---:" * (len(head) - 1) + "|"]
    reasons = []
    for m in order:
        cells = [cell(nums, notes, n, m) for n in names]
        ratios = []
        for (v, _), o in zip(cells[1:], others):
            a = cells[0][0]
            ratios.append(f"{a / v:.3f}" if a is not None and v else "n/a")
        text = []
        for (v, t), n in zip(cells, names):
            if v is None:
                reasons.append(f"  {n} {m}: {t}")
                t = "n/a"
            text.append(t)
        print(f"{m:{width}} " + " ".join(f"{t:>14}" for t in text + ratios))
        md.append("| " + " | ".join([m] + [t for _, t in cells] + ratios) + " |")
    if reasons:
        print("n/a cells:")
        print("\n".join(reasons))
    for label, f in (("disk", "disk_mbps"), ("O_DIRECT disk", "disk_direct_mbps")):
        try:
            disk = float(open(os.path.join(out, f)).read())
        except (OSError, ValueError):
            continue
        for n in names:
            v = nums.get((n, "send_mibps_1024x16_sync"))
            if v:
                pct = [x * 1.048576 / disk * 100 for x in v]
                print(f"SYNC_FLUSH 1 KiB x16 of {disk:.0f} MB/s {label}, {n}: median {statistics.median(pct):.0f}%"
                      f" (per rep {' / '.join(f'{p:.0f}' for p in pct)})")
    with open(os.path.join(out, "summary.md"), "w") as fh:
        fh.write("\n".join(md) + "\n")


if __name__ == "__main__":
    main()
