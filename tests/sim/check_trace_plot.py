#!/usr/bin/python3
"""Runs `multilane sim --trace T --plot P` and checks that T is trace-event JSON with slices
and P is a PNG. usage: check_trace_plot.py MULTILANE PLATFORM OUTDIR"""
import json
import os
import subprocess
import sys

exe, platform, outdir = sys.argv[1:4]
trace = os.path.join(outdir, "sim-trace.json")
png = os.path.join(outdir, "sim-plot.png")
subprocess.run([exe, "sim", "--platform", platform, "--algorithm", "multilane", "--sizes",
                "1KiB,1MiB", "--trace", trace, "--plot", png], check=True,
               stdout=subprocess.DEVNULL)
with open(trace) as f:
    events = json.load(f)["traceEvents"]
assert any(e["ph"] == "X" for e in events), "no slices in the trace"
with open(png, "rb") as f:
    assert f.read(8) == b"\x89PNG\r\n\x1a\n", "not a PNG"
print("trace and plot ok")
