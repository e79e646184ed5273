#!/usr/bin/env python3
"""The Python package's overhead per run, against the C++ embedding API.

    PYTHONPATH=build/python python3 scripts/bench_python.py [--model DIR] [--runs N]
        [--warmup N] [--rounds R] [--device D] [--threads T] [--build DIR]

Runs one model (default tests/models/cnn, its test_data_set_0) three ways, R
rounds in turn so that drift on a shared machine hits each alike:
  C++       build/bin/dynrt_api_bench: set_input from a pointer, run(), read
            the outputs (nothing but the API)
  Request   r.run({name: array}) : the same through Python, outputs copied
            into new numpy arrays
  Model     m.run({name: array}) : the same through a pooled request
and prints each one's median microseconds per run (the median of the rounds'
medians) and the Python overhead (Python minus C++). A measuring aid, not a
test: docs/python.md quotes its figures. Needs the targets dynrt_python and
dynrt_api_bench built.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), ".."))


def python_median_us(fn, runs, warmup):
    for _ in range(warmup):
        fn()
    times = []
    clock = time.perf_counter_ns
    for _ in range(runs):
        t0 = clock()
        fn()
        times.append(clock() - t0)
    return statistics.median(times) / 1000.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--model", default=os.path.join(ROOT, "tests", "models", "cnn"))
    ap.add_argument("--runs", type=int, default=2000)
    ap.add_argument("--warmup", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"))
    args = ap.parse_args()

    sys.path.insert(0, os.path.join(args.build, "python"))
    import dynrt  # noqa: E402

    model = os.path.join(args.model, "model.onnx")
    data = os.path.join(args.model, "test_data_set_0")
    bench = os.path.join(args.build, "bin", "dynrt_api_bench")
    if not os.path.exists(bench):
        sys.exit("bench_python: %s not found: cmake --build %s --target dynrt_api_bench" % (bench, args.build))

    m = dynrt.Model(model, device=args.device, threads=args.threads)
    feeds = {info.name: dynrt.load_tensor(os.path.join(data, "input_%d.pb" % i)) for i, info in enumerate(m.inputs)}
    r = m.create_request()

    rows = {"C++ (set_input, run, outputs)": [], "Python Request.run(feeds)": [], "Python Model.run(feeds)": []}
    for _ in range(args.rounds):
        out = subprocess.run([bench, model, data, str(args.runs), str(args.warmup), args.device, str(args.threads)],
                             check=True, capture_output=True, text=True).stdout
        rows["C++ (set_input, run, outputs)"].append(json.loads(out)["median_us"])
        rows["Python Request.run(feeds)"].append(python_median_us(lambda: r.run(feeds), args.runs, args.warmup))
        rows["Python Model.run(feeds)"].append(python_median_us(lambda: m.run(feeds), args.runs, args.warmup))

    shapes = ", ".join("%s %s" % (k, list(v.shape)) for k, v in feeds.items())
    print("model %s (%s) on %s, %d threads; median of %d rounds of %d runs" %
          (os.path.relpath(model, ROOT), shapes, m.device, args.threads, args.rounds, args.runs))
    cpp = statistics.median(rows["C++ (set_input, run, outputs)"])
    for name, values in rows.items():
        med = statistics.median(values)
        extra = "" if name.startswith("C++") else "   overhead %+.1f us (%+.0f%%)" % (med - cpp, 100.0 * (med - cpp) / cpp)
        print("  %-32s %8.1f us/run%s" % (name, med, extra))


if __name__ == "__main__":
    main()
