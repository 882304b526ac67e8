#!/usr/bin/python3
"""Plot `multilane sim|model|bench --json` results: time against size, one line per algorithm,
log-log, like the figures of the broadcast and scatter/gather papers. The fastest algorithm at
the largest size is drawn bold and labelled with how much faster it is than the runner-up and
than the slowest, so that the plot answers "who wins, by how much" without its table.

usage: /usr/bin/python3 scripts/plot.py RESULTS.json OUT.png [--title TITLE]
(Debian's python3-matplotlib lives under /usr/bin/python3.)

bench/emu_compare.sh imports ratio_text() and plot_comparison() from here: one way to quote a
speed-up and to draw one, for every plot of the project."""
import argparse
import json


def pyplot():
    """matplotlib's pyplot without a display; imported on first use, so that ratio_text() works
    where matplotlib is missing."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def ratio_text(ratio):
    """1.27x, 6.9x, 11.2x, 140x: as a reader quotes a speed-up."""
    return f"{ratio:.2f}x" if ratio < 2 else f"{ratio:.1f}x" if ratio < 100 else f"{ratio:.0f}x"


def winner_label(series):
    """(winner, x, y, text) at the largest size every algorithm reached, or None."""
    sizes = set.intersection(*(set(s for s, _ in points) for points in series.values()))
    if len(series) < 2 or not sizes:
        return None
    x = max(sizes)
    at = sorted((dict(points)[x], name) for name, points in series.items())
    (best, winner), (second, runner_up), (worst, slowest) = at[0], at[1], at[-1]
    if best <= 0:
        return None
    text = f"{winner} wins: {ratio_text(second / best)} {runner_up}"
    if slowest != runner_up:
        text += f", {ratio_text(worst / best)} {slowest}"
    return winner, x, best, text


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
    pairs = doc.get("x") == "wan_pairs"
    label = None if pairs else winner_label(series)
    fig, ax = pyplot().subplots(figsize=(7, 5))
    # Ten colours repeat from the eleventh series on: those get other markers and dashes, so
    # that no two algorithms look alike.
    styles = [("o", "-"), ("s", "--"), ("^", ":")]
    for i, (name, points) in enumerate(series.items()):
        points.sort()
        marker, line = styles[(i // 10) % len(styles)]
        wins = label is not None and name == label[0]
        ax.plot([p[0] for p in points], [p[1] for p in points], marker=marker, linestyle=line,
                linewidth=3 if wins else 1.5, zorder=3 if wins else 2,
                label=f"{name} (fastest)" if wins else name)
    if label:
        _, x, y, text = label
        ax.annotate(text, xy=(x, y), xytext=(0.97, 0.04), textcoords="axes fraction",
                    ha="right", va="bottom", fontsize="medium", fontweight="bold",
                    bbox=dict(boxstyle="round", fc="lightyellow", alpha=0.9),
                    arrowprops=dict(arrowstyle="->", lw=1.5))
    ax.set_xscale("log", base=2)
    ax.set_yscale("log")
    ax.set_xlabel("WAN node pairs P" if pairs else "message size (bytes)")
    ax.set_ylabel("time (s)")
    ax.set_title(args.title or f'{doc.get("collective", "")} on {doc.get("platform", "")}')
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize="small", loc="upper left")
    fig.tight_layout()
    fig.savefig(args.out, dpi=100)


def plot_comparison(rows, out, title):
    """One pair of bars per row (label, theirs, their_s, ours, our_s): the faster bar is drawn
    in colour and the pair is labelled with the winner and the ratio."""
    fig, ax = pyplot().subplots(figsize=(7, 1.2 + 1.1 * len(rows)))
    ticks, labels = [], []
    for i, (label, theirs, their_s, ours, our_s) in enumerate(rows):
        base = 3 * (len(rows) - 1 - i)
        for offset, name, seconds, colour in ((1, theirs, their_s, "tab:blue"),
                                              (0, ours, our_s, "tab:orange")):
            wins = seconds == min(their_s, our_s)
            ax.barh(base + offset, seconds, color=colour if wins else "lightgrey",
                    edgecolor=colour)
            ax.text(seconds, base + offset, f" {name}", va="center", fontsize="small")
            ticks.append(base + offset)
            labels.append(label if offset == 1 else "")
        winner = ours if our_s < their_s else theirs
        ratio = max(their_s, our_s) / min(their_s, our_s)
        ax.text(0.98, base + 0.5, f"{winner}\n{ratio_text(ratio)} faster",
                transform=ax.get_yaxis_transform(), ha="right", va="center",
                fontsize="large", fontweight="bold",
                bbox=dict(boxstyle="round", fc="lightyellow", alpha=0.9))
    ax.set_yticks(ticks, labels)
    ax.set_xlabel("time per call (s), lower is better")
    ax.set_xlim(0, 2.2 * max(max(r[2], r[4]) for r in rows))
    ax.set_title(title)
    fig.tight_layout()
    fig.savefig(out, dpi=100)


if __name__ == "__main__":
    main()
