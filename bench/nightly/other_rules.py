#!/usr/bin/env python3
"""The rules other tools use, replayed over a record of nights (issue 23).

Side by side with bench/nightly/replay.sh (crh's own gate over the same
nights): every night of a record is judged, figure by figure, against the
nights before it by the rules a team gets from existing tools:

  last-night-20%   tonight against the night before, worse by more than the
                   limit (crh before issue 23; what a script around wrk, k6
                   or Vegeta comparing two runs does)
  bencher-t-0.99   Bencher's Student t-test threshold: worse than
                   mean + t(0.99, n-1) * sd of the last nights (up to 64; at
                   least --min-nights), with no practical limit
  bencher+limit    the same, and also worse than the limit (the practical
                   limit crh's gate adds, without its robust screen)

A night is flagged when any of its figures is. Not-backed figures are left
out, as crh's gate leaves them out. Only nights whose verdict says they were
comparable passed nights join the window (as in crh's gate).

usage: bench/nightly/other_rules.py DIR [--limit 20] [--min-nights 5]
"""
import argparse
import glob
import json
import math
import os
import statistics
import sys


def t_quantile(p, df):
    """Student t quantile by bisection on the CDF (Simpson's rule on the density)."""
    coef = math.exp(math.lgamma((df + 1) / 2) - math.lgamma(df / 2)) / math.sqrt(df * math.pi)

    def cdf(x):
        steps = 2000
        h = x / steps
        total = 0.0
        for i in range(steps + 1):
            t = i * h
            w = 1 if i in (0, steps) else (4 if i % 2 else 2)
            total += w * coef * (1 + t * t / df) ** (-(df + 1) / 2)
        return 0.5 + total * h / 3

    lo, hi = 0.0, 200.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if cdf(mid) < p:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2


def worse_by(value, base, better):
    """How much worse tonight is than base, as a fraction (negative: better)."""
    if base == 0:
        return 0.0 if value == 0 else math.inf
    change = (value - base) / abs(base)
    return change if better == "lower" else -change


def load_nights(directory):
    nights = []
    for path in sorted(glob.glob(os.path.join(directory, "night-*.json"))):
        with open(path) as f:
            doc = json.load(f)
        figures = {}
        for fig in doc.get("figures", []):
            if not fig.get("backed", True) or fig.get("value") is None:
                continue
            key = (fig["scenario"], fig["operation"], fig["figure"])
            figures[key] = (float(fig["value"]), fig.get("better", "lower"))
        verdict = doc.get("verdict", {})
        usable = verdict.get("status") == "passed" and verdict.get("comparable", True)
        nights.append({"name": doc.get("night", os.path.basename(path)), "figures": figures, "usable": usable})
    return nights


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("dir")
    parser.add_argument("--limit", type=float, default=20.0, help="practical limit in percent (default 20)")
    parser.add_argument("--min-nights", type=int, default=5, help="nights a t-test needs (default 5)")
    args = parser.parse_args()
    nights = load_nights(args.dir)
    if not nights:
        print(f"other_rules.py: no night-*.json in {args.dir}", file=sys.stderr)
        return 2
    limit = args.limit / 100
    quantiles = {}
    rules = ["last-night-20%", "bencher-t-0.99", "bencher+limit"]
    flagged = {r: 0 for r in rules}
    judged = {r: 0 for r in rules}
    figures_flagged = {r: 0 for r in rules}
    for i, night in enumerate(nights):
        before = [n for n in nights[:i] if n["usable"]]
        hits = {r: [] for r in rules}
        if before:
            judged["last-night-20%"] += 1
            last = before[-1]["figures"]
            for key, (value, better) in night["figures"].items():
                if key in last and worse_by(value, last[key][0], better) > limit:
                    hits["last-night-20%"].append(key)
        window = before[-64:]
        if len(window) >= args.min_nights:
            judged["bencher-t-0.99"] += 1
            judged["bencher+limit"] += 1
            for key, (value, better) in night["figures"].items():
                values = [n["figures"][key][0] for n in window if key in n["figures"]]
                if len(values) < args.min_nights:
                    continue
                df = len(values) - 1
                if df not in quantiles:
                    quantiles[df] = t_quantile(0.99, df)
                mean, sd = statistics.fmean(values), statistics.stdev(values)
                bound = mean + quantiles[df] * sd if better == "lower" else mean - quantiles[df] * sd
                beyond = value > bound if better == "lower" else value < bound
                if beyond:
                    hits["bencher-t-0.99"].append(key)
                    if worse_by(value, mean, better) > limit:
                        hits["bencher+limit"].append(key)
        marks = []
        for r in rules:
            if hits[r]:
                flagged[r] += 1
                figures_flagged[r] += len(hits[r])
                marks.append(f"{r}: {len(hits[r])} ({', '.join(' '.join(k) for k in hits[r][:3])}"
                             f"{', ...' if len(hits[r]) > 3 else ''})")
        print(f"night {i + 1:3d} {night['name']}: {len(before):2d} usable before; "
              + ("; ".join(marks) if marks else "no rule flags it"))
    print()
    print(f"other_rules.py: {len(nights)} nights in {args.dir}, limit {args.limit:g}%, t-test from {args.min_nights} nights")
    for r in rules:
        print(f"  {r:16s} flags {flagged[r]:3d} of {judged[r]:3d} nights judged ({figures_flagged[r]} figures)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
