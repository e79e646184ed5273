#!/usr/bin/env python3
"""Figures of a decode run report (docs/performance.md, "Decode with a KV cache").

usage: decode_figures.py REPORT.json [REPORT.json ...]

For each `dynrt run --report` file: device allocations made by the request's
memory pool after step 16, bytes copied by concat kernels, peak device bytes
against the logical bytes of the tensors held at that step, steps/s over the
whole run (kernel builds of the first steps included: a cold program cache
shows there), and the median time of a step after step 16 (steady state).
"""
import json
import statistics
import sys


def figures(path):
    r = json.load(open(path))
    runs = r["runs"]
    late = runs[16:]
    allocs_late = sum(x["counters"]["pool_misses"] for x in late)
    copied = sum(x["counters"]["concat_bytes_copied"] for x in runs)
    state_copied = sum(x["counters"]["state_bytes_copied"] for x in runs)
    peak_run = max(runs, key=lambda x: x["peak_bytes"])
    ratio = peak_run["peak_bytes"] / max(1, peak_run["tensor_bytes"])
    steps_per_s = len(runs) / (r["totals"]["host_ms"] / 1000.0)
    return {
        "file": path,
        "device_allocs_after_16": allocs_late,
        "concat_bytes_copied": copied,
        "state_bytes_copied": state_copied,
        "peak_bytes": peak_run["peak_bytes"],
        "tensor_bytes_at_peak": peak_run["tensor_bytes"],
        "peak_over_tensors": round(ratio, 3),
        "steps_per_s": round(steps_per_s, 1),
        "ms_per_step": round(r["totals"]["host_ms"] / len(runs), 3),
        "median_ms_per_step_after_16": round(statistics.median(x["host_ms"] for x in late), 3) if late else None,
    }


if __name__ == "__main__":
    for p in sys.argv[1:]:
        print(json.dumps(figures(p)))
