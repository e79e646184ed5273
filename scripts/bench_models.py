#!/usr/bin/env python3
"""Per-inference time of dynrt on the model corpus next to onnxruntime, on the
same models, shapes and data, in one run: a benchmark, not a test.

    scripts/bench_models.py                  # venv under build/bench-venv (onnx, onnxruntime, numpy)
    scripts/bench_models.py --no-venv        # the current python's packages
    scripts/bench_models.py --devices cpu,ocl --rounds 5 --repeat 20 --threads 1

Both engines get the same thread count: --threads N is onnxruntime's
intra_op_num_threads (inter-op 1) and dynrt's `--threads N` (the cpu engine's
compute threads; the OpenCL device ignores it).

For each model of tests/models that runs (no PENDING file) and each of its
data sets, every round runs `dynrt run MODEL --input ...` (the data set's
inputs as .npy, --repeat runs on one request, per-run host times from the
report) and then onnxruntime on the same inputs (the same number of runs),
alternating; the figure per engine is the median of the per-round medians,
the first run of each dynrt round left out (it builds kernels; the report's
first_run_ms says how long). Ratios are dynrt / onnxruntime (below 1: dynrt is
faster). The last column checks dynrt's outputs against onnxruntime's (max
absolute difference over the data sets).
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def ensure_venv(argv):
    venv = os.path.join(ROOT, "build", "bench-venv")
    py = os.path.join(venv, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", venv])
        subprocess.check_call([py, "-m", "pip", "install", "--quiet", "onnx", "onnxruntime", "numpy"])
    os.execv(py, [py, os.path.abspath(__file__), "--no-venv"] + argv)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dynrt", default=os.path.join(ROOT, "build", "bin", "dynrt"))
    ap.add_argument("--models", default=os.path.join(ROOT, "tests", "models"))
    ap.add_argument("--devices", default="cpu,ocl")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--threads", type=int, default=1,
                    help="compute threads of each engine: onnxruntime intra-op threads and dynrt --threads")
    ap.add_argument("--ort-provider", default="CPUExecutionProvider",
                    help="onnxruntime execution provider (CUDAExecutionProvider on a GPU machine)")
    ap.add_argument("--no-venv", action="store_true")
    args, rest = ap.parse_known_args()
    if not args.no_venv:
        ensure_venv(sys.argv[1:])
    bench(args)


def bench(args):
    import numpy as np
    import onnx
    import onnxruntime as ort
    from onnx import numpy_helper

    opts = ort.SessionOptions()
    opts.intra_op_num_threads = args.threads
    opts.inter_op_num_threads = 1
    devices = [d for d in args.devices.split(",") if d]
    rows = []
    tmp = tempfile.mkdtemp(prefix="dynrt_bench_")
    for name in sorted(os.listdir(args.models)):
        folder = os.path.join(args.models, name)
        model = os.path.join(folder, "model.onnx")
        if not os.path.exists(model) or os.path.exists(os.path.join(folder, "PENDING")):
            continue
        sess = ort.InferenceSession(model, opts, providers=[args.ort_provider])
        in_names = [i.name for i in sess.get_inputs()]
        out_names = [o.name for o in sess.get_outputs()]
        sets = sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_"))
        for ds in sets:
            feeds, npys = {}, []
            for k, n in enumerate(in_names):
                t = onnx.TensorProto()
                with open(os.path.join(folder, ds, "input_%d.pb" % k), "rb") as f:
                    t.ParseFromString(f.read())
                a = numpy_helper.to_array(t)
                feeds[n] = a
                p = os.path.join(tmp, "%s_%s_%d.npy" % (name, ds, k))
                np.save(p, a)
                npys += ["--input", "%s=%s" % (n, p)]
            shapes = " ".join("%s%s" % (n, list(a.shape)) for n, a in feeds.items())
            times = {d: [] for d in devices}
            first = {d: [] for d in devices}
            ort_times = []
            err = {d: 0.0 for d in devices}
            want = sess.run(None, feeds)
            for _ in range(args.rounds):
                for d in devices:
                    report = os.path.join(tmp, "report.json")
                    outs = os.path.join(tmp, "outs_" + d)
                    subprocess.run([args.dynrt, "run", model, "--device", d, "--repeat", str(args.repeat),
                                    "--threads", str(args.threads), "--report", report, "--report-level", "runs",
                                    "--save-outputs", outs] + npys,
                                   check=True, stdout=subprocess.DEVNULL)
                    with open(report) as f:
                        r = json.load(f)
                    ms = [run["host_ms"] for run in r["runs"]]
                    first[d].append(ms[0])
                    times[d].append(statistics.median(ms[1:] if len(ms) > 1 else ms))
                    # Output names are not file names: run_0/index.json says
                    # which file holds each output (docs/onnx.md).
                    with open(os.path.join(outs, "run_0", "index.json")) as f:
                        files = {o["name"]: o["file"] for o in json.load(f)["outputs"]}
                    for k, n in enumerate(out_names):
                        got = np.load(os.path.join(outs, "run_0", files[n]))
                        err[d] = max(err[d], float(np.max(np.abs(got.astype(np.float64) - want[k]))))
                per = []
                for _ in range(args.repeat):
                    t0 = time.perf_counter()
                    sess.run(None, feeds)
                    per.append((time.perf_counter() - t0) * 1e3)
                ort_times.append(statistics.median(per))
            o = statistics.median(ort_times)
            row = {"model": name, "shapes": shapes, "ort_ms": o}
            for d in devices:
                row[d] = statistics.median(times[d])
                row[d + "_first"] = statistics.median(first[d])
                row[d + "_err"] = err[d]
            rows.append(row)
            print(json.dumps(row), file=sys.stderr)
    head = "| model | shapes | " + " | ".join("dynrt %s / ort" % d for d in devices) + \
        " | " + " | ".join("%s first run / steady" % d for d in devices) + " | max abs err |"
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        cells = [r["model"], r["shapes"]]
        cells += ["%.2f" % (r[d] / r["ort_ms"]) for d in devices]
        cells += ["%.1f" % (r[d + "_first"] / r[d]) for d in devices]
        cells += ["%.1e" % max(r[d + "_err"] for d in devices)]
        print("| " + " | ".join(cells) + " |")
    print("\nonnxruntime %s (%s), %d intra-op thread(s), dynrt --threads %d; %d rounds x %d runs" %
          (ort.__version__, args.ort_provider, args.threads, args.threads, args.rounds, args.repeat))
    print("\nabsolute per-run medians (ms):")
    for r in rows:
        print("  %s %s: ort %.3f, %s" % (r["model"], r["shapes"], r["ort_ms"],
                                        ", ".join("%s %.3f (first %.1f)" % (d, r[d], r[d + "_first"])
                                                  for d in devices)))


if __name__ == "__main__":
    main()
