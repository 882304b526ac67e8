#!/usr/bin/python3
"""Plot `multilane sim|model --json` results: time against size, one line per algorithm,
log-log, like the figures of the broadcast and scatter/gather papers.

usage: /usr/bin/python3 scripts/plot.py RESULTS.json OUT.png [--title TITLE]
(Debian's python3-matplotlib lives under /usr/bin/python3.)"""
import argparse
import json

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("results")
    ap.add_argument("out")
    ap.add_argument("--title", default="")
    args = ap.parse_args()
    with open(args.results) as f:
        doc = json.load(f)
    series = {}
    for r in doc["results"]:
        if r.get("time_s") is None or "error" in r:
            continue
        series.setdefault(r["algorithm"], []).append((r["size"], r["time_s"]))
    fig, ax = plt.subplots(figsize=(7, 5))
    # Ten colours repeat from the eleventh series on: those get other markers and dashes, so
    # that no two algorithms look alike.
    styles = [("o", "-"), ("s", "--"), ("^", ":")]
    for i, (name, points) in enumerate(series.items()):
        points.sort()
        marker, line = styles[(i // 10) % len(styles)]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, linestyle=line,
                label=name)
    pairs = doc.get("x") == "wan_pairs"
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("WAN node pairs P" if pairs else "message size (bytes)")
    ax.set_ylabel("time (s)")
    ax.set_title(args.title or f'{doc.get("collective", "")} on {doc.get("platform", "")}')
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)


if __name__ == "__main__":
    main()
