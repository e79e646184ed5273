#!/usr/bin/env python3
"""dynrt's cpu engine next to onnxruntime and OpenVINO (CPU plugin, f32) on the
same ONNX models, weights and shape schedules: a benchmark, not a test.

    scripts/bench_cpu.py                     # venv under build/bench-cpu-venv (onnx, onnxruntime, openvino, numpy)
    scripts/bench_cpu.py --quick             # smoke run: few shapes, 1 round
    scripts/bench_cpu.py --corpus --json out.json --rounds 3 --repeat 5 --threads 1,2

The workloads are ONNX models (opset 17, dynamic axes, seeded weights) that
the script writes under build/bench-cpu-work:

  decode64     decode-like block 64 wide (configs/llm_decode.yaml): query of a
               token, scores over x [1, seq, 64] scaled by 1/sqrt(d), softmax,
               weighted sum, output projection, residual, gelu MLP 2x wide,
               residual; MatMul+Add projections, gelu as Erf; seq 1..512
  kv64         KV-cache decode 64 wide (configs/llm_decode_kv.yaml): token id
               embedded (Gather), q/k/v projections, Concat of past_k/past_v
               [1, seq, 64] with the new row inside the model, attention, MLP;
               outputs the token's hidden state and both grown caches; seq 1..512
  conv_small   configs/conv_net.yaml: conv3x3+relu, stride-2 conv3x3 next to a
               stride-2 1x1 shortcut, add, silu; batch 1,2,4 x size
               8,16,13,32,17, then revisits
  decode1024   the decode block 1024 wide, MLP 4x wide (40 MiB of weights), seq 1..64 step 3
  decode2048   the same 2048 wide (160 MiB of weights), seq 1..64 step 7
  conv64       x [1, 64, s, s]: conv3x3+relu, conv3x3, residual add, relu,
               conv3x3+relu (64 channels), s = 56, 72, 96, 112
  corpus/*     (--corpus) the models of tests/models, each data set's inputs

Every shape of a schedule runs --repeat times in a row on one request /
session. For each workload and thread count (dynrt --threads, onnxruntime
intra_op_num_threads with inter_op 1, OpenVINO INFERENCE_NUM_THREADS), each
round runs dynrt, then onnxruntime, then OpenVINO, each in its own process
(peak RSS: the process's ru_maxrss, read by GNU time; onnxruntime's and
OpenVINO's include the Python interpreter and numpy); figures are medians over the rounds of:
the median of the steady-state runs (every run of a shape but its first),
the median of the first runs at a new shape, and the setup (dynrt load +
compile from its report; onnxruntime session creation; OpenVINO read +
compile). Ratios are dynrt / peer (below 1: dynrt is faster). dynrt's outputs
are checked against onnxruntime's on a few shapes of each schedule fed from
.npy files (max absolute difference). The memory check runs the 64-wide KV
decode over seq 1..1000 (1000 distinct shapes, one run each) once per engine.
"""
import argparse
import json
import math
import os
import platform
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
VENV = os.path.join(ROOT, "build", "bench-cpu-venv")
PACKAGES = ["onnx", "onnxruntime", "openvino", "numpy"]
ENGINES = ["dynrt", "ort", "ov"]
ERROR_CHECK_SHAPES = 4
TIME = "/usr/bin/time"
WIDE = {"decode1024", "decode2048", "conv64"}


def ensure_venv(argv):
    py = os.path.join(VENV, "bin", "python")
    if not os.path.exists(py):
        subprocess.check_call([sys.executable, "-m", "venv", VENV])
        subprocess.check_call([py, "-m", "pip", "install", "--quiet"] + PACKAGES)
    os.execv(py, [py, os.path.abspath(__file__), "--no-venv"] + argv)


# ---------------------------------------------------------------- models


def uniform(rng, shape, bound):
    return rng.uniform(-bound, bound, size=shape).astype("float32")


class Graph:
    """A small onnx.helper front end: named nodes, initializers, fresh names."""

    def __init__(self, seed):
        import numpy as np
        self.rng = np.random.default_rng(seed)
        self.nodes, self.inits, self.count = [], [], 0

    def const(self, name, array):
        from onnx import numpy_helper
        self.inits.append(numpy_helper.from_array(array, name))
        return name

    def op(self, op_type, inputs, out=None, **attrs):
        from onnx import helper
        self.count += 1
        out = out or "%s_%d" % (op_type.lower(), self.count)
        self.nodes.append(helper.make_node(op_type, inputs, [out], **attrs))
        return out

    def linear(self, x, n_in, n_out, name):
        w = self.const(name + "_w", uniform(self.rng, (n_in, n_out), 1.0 / math.sqrt(n_in)))
        b = self.const(name + "_b", uniform(self.rng, (n_out,), 0.01))
        return self.op("Add", [self.op("MatMul", [x, w]), b])

    def scalar(self, name, value):
        import numpy as np
        return self.const(name, np.array(value, dtype=np.float32))

    def gelu(self, x):
        half = self.op("Mul", [x, self.scalar("half", 0.5)])
        erf = self.op("Erf", [self.op("Div", [x, self.scalar("sqrt2", math.sqrt(2.0))])])
        return self.op("Mul", [half, self.op("Add", [erf, self.scalar("one", 1.0)])])

    def attention_mlp(self, token, q, keys, values, width, mlp):
        """Scores of q over keys, softmax, weighted values, projection, residual, gelu MLP, residual."""
        scores = self.op("MatMul", [q, self.op("Transpose", [keys], perm=[0, 2, 1])])
        scaled = self.op("Mul", [scores, self.scalar("inv_sqrt_d", 1.0 / math.sqrt(width))])
        probs = self.op("Softmax", [scaled], axis=-1)
        attended = self.op("MatMul", [probs, values])
        resid = self.op("Add", [token, self.linear(attended, width, width, "wo")])
        up = self.gelu(self.linear(resid, width, mlp * width, "w1"))
        return self.op("Add", [resid, self.linear(up, mlp * width, width, "w2")], out="out")

    def save(self, path, name, inputs, outputs):
        import onnx
        from onnx import helper
        g = helper.make_graph(self.nodes, name, inputs, outputs, self.inits)
        m = helper.make_model(g, opset_imports=[helper.make_opsetid("", 17)], producer_name="bench_cpu")
        onnx.checker.check_model(m)
        onnx.save(m, path)


def f32(name, dims):
    from onnx import TensorProto, helper
    return helper.make_tensor_value_info(name, TensorProto.FLOAT, dims)


def decode_model(path, width, mlp, seed):
    g = Graph(seed)
    q = g.linear("tok", width, width, "wq")
    g.attention_mlp("tok", q, "x", "x", width, mlp)
    g.save(path, "decode%d" % width, [f32("x", [1, "seq", width]), f32("tok", [1, 1, width])],
           [f32("out", [1, 1, width])])


def kv_model(path, width, seed):
    from onnx import TensorProto, helper
    g = Graph(seed)
    table = g.const("table", uniform(g.rng, (256, width), 1.0))
    emb = g.op("Gather", [table, "ids"], axis=0)
    q = g.linear(emb, width, width, "wq")
    k_all = g.op("Concat", ["past_k", g.linear(emb, width, width, "wk")], out="present_k", axis=1)
    v_all = g.op("Concat", ["past_v", g.linear(emb, width, width, "wv")], out="present_v", axis=1)
    g.attention_mlp(emb, q, k_all, v_all, width, 2)
    ids = helper.make_tensor_value_info("ids", TensorProto.INT64, [1, 1])
    g.save(path, "kv%d" % width, [ids, f32("past_k", [1, "seq", width]), f32("past_v", [1, "seq", width])],
           [f32("out", [1, 1, width]), f32("present_k", [1, "seq1", width]), f32("present_v", [1, "seq1", width])])


def conv(g, x, c_in, c_out, k, stride, pad, name, bias=True):
    w = g.const(name + "_w", uniform(g.rng, (c_out, c_in, k, k), 1.0 / math.sqrt(c_in * k * k)))
    ins = [x, w] + ([g.const(name + "_b", uniform(g.rng, (c_out,), 0.1))] if bias else [])
    return g.op("Conv", ins, kernel_shape=[k, k], strides=[stride, stride], pads=[pad] * 4)


def conv_small_model(path, seed):
    g = Graph(seed)
    relu1 = g.op("Relu", [conv(g, "x", 3, 8, 3, 1, 1, "conv1")])
    conv2 = conv(g, relu1, 8, 8, 3, 2, 1, "conv2", bias=False)
    shortcut = conv(g, "x", 3, 8, 1, 2, 0, "shortcut", bias=False)
    s = g.op("Add", [conv2, shortcut])
    g.op("Mul", [s, g.op("Sigmoid", [s])], out="out")
    g.save(path, "conv_small", [f32("x", ["batch", 3, "size", "size"])], [f32("out", ["batch", 8, "half", "half"])])


def conv64_model(path, seed):
    g = Graph(seed)
    c1 = g.op("Relu", [conv(g, "x", 64, 64, 3, 1, 1, "conv1")])
    block = g.op("Relu", [g.op("Add", [conv(g, c1, 64, 64, 3, 1, 1, "conv2"), "x"])])
    g.op("Relu", [conv(g, block, 64, 64, 3, 1, 1, "conv3")], out="out")
    g.save(path, "conv64", [f32("x", [1, 64, "size", "size"])], [f32("out", [1, 64, "size", "size"])])


# ------------------------------------------------------------- workloads


def decode_shapes(width, seqs):
    return [{"x": [1, s, width], "tok": [1, 1, width]} for s in seqs]


def kv_shapes(width, seqs):
    return [{"ids": [1, 1], "past_k": [1, s, width], "past_v": [1, s, width]} for s in seqs]


def conv_small_shapes(quick):
    pairs = [(1, 8), (2, 13), (4, 17)] if quick else \
        [(b, s) for b in (1, 2, 4) for s in (8, 16, 13, 32, 17)] + [(2, 13), (2, 8), (2, 13)]
    return [{"x": [b, 3, s, s]} for b, s in pairs]


def workloads(args, work):
    """name -> (model path, builder, entries); an entry is {"shapes"} or {"feed"} with its data."""
    q = args.quick
    seq64 = [1, 17] if q else list(range(1, 65))
    long_ = [1, 2, 7, 33, 64] if q else list(range(1, 513))
    spec = [
        ("decode64", lambda p: decode_model(p, 64, 2, 2), decode_shapes(64, long_)),
        ("kv64", lambda p: kv_model(p, 64, 3), kv_shapes(64, long_)),
        ("conv_small", lambda p: conv_small_model(p, 11), conv_small_shapes(q)),
        ("decode1024", lambda p: decode_model(p, 1024, 4, 5), decode_shapes(1024, seq64 if q else seq64[::3])),
        ("decode2048", lambda p: decode_model(p, 2048, 4, 6), decode_shapes(2048, seq64 if q else seq64[::7])),
        ("conv64", lambda p: conv64_model(p, 21), [{"x": [1, 64, s, s]} for s in ([56] if q else [56, 72, 96, 112])]),
    ]
    only = set(args.only.split(",")) if args.only else None
    out = []
    for name, build, shapes in spec:
        if only and name not in only:
            continue
        path = os.path.join(work, name + ".onnx")
        build(path)
        out.append({"name": name, "model": path, "entries": [{"shapes": s} for s in shapes]})
    if args.corpus:
        out += corpus_workloads(args, work, only)
    return out


def corpus_workloads(args, work, only):
    import numpy as np
    import onnx
    from onnx import numpy_helper
    out = []
    for name in sorted(os.listdir(args.models)):
        folder = os.path.join(args.models, name)
        model = os.path.join(folder, "model.onnx")
        if not os.path.exists(model) or os.path.exists(os.path.join(folder, "PENDING")):
            continue
        if only and "corpus/" + name not in only and "corpus" not in only:
            continue
        names = [i.name for i in onnx.load(model, load_external_data=False).graph.input]
        inits = {i.name for i in onnx.load(model, load_external_data=False).graph.initializer}
        names = [n for n in names if n not in inits]
        entries = []
        for ds in sorted(d for d in os.listdir(folder) if d.startswith("test_data_set_")):
            feed = {}
            for k, n in enumerate(names):
                t = onnx.TensorProto()
                with open(os.path.join(folder, ds, "input_%d.pb" % k), "rb") as f:
                    t.ParseFromString(f.read())
                p = os.path.join(work, "corpus_%s_%s_%d.npy" % (name, ds, k))
                np.save(p, numpy_helper.to_array(t))
                feed[n] = p
            entries.append({"feed": feed})
        out.append({"name": "corpus/" + name, "model": model, "entries": entries})
    return out


# ---------------------------------------------------------------- inputs

INT_RANGE = {"ids": (0, 256)}


def make_feeds(shapes, dtypes, seed):
    import numpy as np
    rng = np.random.default_rng(seed)
    feeds = {}
    for name, shape in shapes.items():
        if dtypes[name] == "int64":
            lo, hi = INT_RANGE.get(name, (0, 10))
            feeds[name] = rng.integers(lo, hi, size=shape, dtype=np.int64)
        else:
            feeds[name] = rng.uniform(-1, 1, size=shape).astype(dtypes[name])
    return feeds


def entry_feeds(entry, dtypes, seed):
    import numpy as np
    if "feed" in entry:
        return {n: np.load(p) for n, p in entry["feed"].items()}
    return make_feeds(entry["shapes"], dtypes, seed)


def input_dtypes(model):
    import onnx
    from onnx import helper
    g = onnx.load(model, load_external_data=False).graph
    inits = {i.name for i in g.initializer}
    return {i.name: helper.tensor_dtype_to_np_dtype(i.type.tensor_type.elem_type).name
            for i in g.input if i.name not in inits}


# ------------------------------------------------------ engine processes


def run_measured(cmd, log, env=None):
    """Runs cmd, returns (exit code, peak RSS in MiB). GNU time reads the child's ru_maxrss: a child
    forked from this (large) process would inherit its RSS as a floor, one forked from time does not."""
    rss_file = log + ".rss"
    with open(log, "w") as out:
        code = subprocess.call([TIME, "-f", "%M", "-o", rss_file] + cmd, stdout=out, stderr=subprocess.STDOUT,
                               env=env)
    try:
        with open(rss_file) as f:
            rss = int(f.read().split()[-1]) / 1024.0
    except (OSError, ValueError, IndexError):
        rss = None
    return code, rss


def failure(code, path):
    """The exit code or signal and the log's error lines (or its last lines): why an engine could not run."""
    how = "killed by signal %d" % (code - 128) if code > 128 else "exit %d" % code
    try:
        with open(path) as f:
            lines = [line.strip() for line in f if line.strip() and not line.startswith("Command ")]
    except OSError:
        lines = []
    errors = [line for line in lines if "error" in line.lower()]
    return " | ".join([how] + (errors or lines)[-3:])


def yaml_list(v):
    return "[" + ", ".join(str(d) for d in v) + "]"


def dynrt_yaml(path, model, entries, repeat, seed=42):
    lines = ["model: %s" % json.dumps(os.path.abspath(model))]
    ranged = sorted({n for e in entries for n in e.get("shapes", {}) if n in INT_RANGE})
    if ranged:
        lines.append("inputs:")
        for n in ranged:
            lines.append("  %s: {random: {low: %d, high: %d}}" % ((n,) + INT_RANGE[n]))
    lines.append("schedule:")
    for e in entries:
        if "feed" in e:
            body = "feed: {%s}" % ", ".join("%s: %s" % (n, json.dumps(p)) for n, p in e["feed"].items())
        else:
            body = "shapes: {%s}" % ", ".join("%s: %s" % (n, yaml_list(s)) for n, s in e["shapes"].items())
        lines.append("  - {%s, repeat: %d}" % (body, repeat))
    lines.append("run: {device: cpu, seed: %d}" % seed)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def split_runs(ms, entries, repeat):
    """First run of each new shape, and every other run (steady state)."""
    seen, first, steady = set(), [], []
    for i, e in enumerate(entries):
        key = json.dumps(e, sort_keys=True)
        block = ms[i * repeat:(i + 1) * repeat]
        if key in seen:
            steady += block
        else:
            seen.add(key)
            first.append(block[0])
            steady += block[1:]
    return first, steady


def summarize(ms, entries, repeat, setup_ms, rss):
    first, steady = split_runs(ms, entries, repeat)
    return {"steady_ms": statistics.median(steady or first), "first_ms": statistics.median(first),
            "setup_ms": setup_ms, "rss_mib": rss, "total_ms": sum(ms)}


def run_dynrt(args, wl, threads, repeat, tmp, save=None):
    yml = os.path.join(tmp, "dynrt.yaml")
    report = os.path.join(tmp, "report.json")
    log = os.path.join(tmp, "dynrt.log")
    dynrt_yaml(yml, wl["model"], wl["entries"], repeat)
    cmd = [args.dynrt, "run", yml, "--device", "cpu", "--report", report]
    if args.dynrt_threads:
        cmd += ["--threads", str(threads)]
    if args.dynrt_report_level:
        cmd += ["--report-level", "runs"]   # every run's host_ms, whatever the schedule's length
    if save:
        cmd += ["--save-outputs", save]
    env = dict(os.environ, OMP_NUM_THREADS=str(threads))
    if os.path.exists(report):
        os.remove(report)
    code, rss = run_measured(cmd, log, env)
    if code != 0:
        return {"error": failure(code, log)}
    with open(report) as f:
        r = json.load(f)
    ms = [run["host_ms"] for run in r["runs"]]
    res = summarize(ms, wl["entries"], repeat, r["load_ms"] + r["compile_ms"], rss)
    res["engine_peak_bytes"] = r.get("engine", {}).get("peak_bytes")
    return res


def run_peer(args, engine, wl, threads, repeat, tmp):
    plan = os.path.join(tmp, "plan.json")
    out = os.path.join(tmp, engine + ".json")
    log = os.path.join(tmp, engine + ".log")
    with open(plan, "w") as f:
        json.dump({"model": wl["model"], "dtypes": input_dtypes(wl["model"]), "entries": wl["entries"],
                   "repeat": repeat, "threads": threads}, f)
    if os.path.exists(out):
        os.remove(out)
    cmd = [sys.executable, os.path.abspath(__file__), "--no-venv", "--worker", engine, "--plan", plan, "--out", out]
    code, rss = run_measured(cmd, log)
    if code != 0:
        return {"error": failure(code, log)}
    with open(out) as f:
        r = json.load(f)
    return summarize(r["ms"], wl["entries"], repeat, r["setup_ms"], rss)


# ------------------------------------------------------------- workers


def worker(engine, plan_path, out_path):
    """One engine in its own process: setup, then every entry `repeat` times in a row."""
    with open(plan_path) as f:
        plan = json.load(f)
    if engine == "ort":
        import onnxruntime as module
        make = make_ort
    else:
        import openvino as module
        make = make_ov
    t0 = time.perf_counter()
    infer = make(module, plan)
    setup_ms = (time.perf_counter() - t0) * 1e3
    ms = []
    for i, e in enumerate(plan["entries"]):
        feeds = entry_feeds(e, plan["dtypes"], 1000 + i)
        for _ in range(plan["repeat"]):
            t = time.perf_counter()
            infer(feeds)
            ms.append((time.perf_counter() - t) * 1e3)
    with open(out_path, "w") as f:
        json.dump({"setup_ms": setup_ms, "ms": ms}, f)


def make_ort(ort, plan):
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = plan["threads"]
    opts.inter_op_num_threads = 1
    sess = ort.InferenceSession(plan["model"], opts, providers=["CPUExecutionProvider"])
    return lambda feeds: sess.run(None, feeds)


def make_ov(ov, plan):
    core = ov.Core()
    cfg = {"INFERENCE_PRECISION_HINT": "f32", "INFERENCE_NUM_THREADS": plan["threads"],
           "PERFORMANCE_HINT": "LATENCY", "NUM_STREAMS": 1}
    req = core.compile_model(core.read_model(plan["model"]), "CPU", cfg).create_infer_request()
    return lambda feeds: req.infer(feeds, share_inputs=True)


# --------------------------------------------------------- error check


def check_entries(entries):
    """A few entries spread over the schedule, first and last included."""
    uniq = []
    for e in entries:
        if e not in uniq:
            uniq.append(e)
    if len(uniq) <= ERROR_CHECK_SHAPES:
        return uniq
    step = (len(uniq) - 1) / (ERROR_CHECK_SHAPES - 1)
    return [uniq[round(i * step)] for i in range(ERROR_CHECK_SHAPES)]


def error_check(args, wl, threads, tmp):
    """dynrt vs onnxruntime (1 thread) on the same data: max abs difference over outputs and shapes."""
    import numpy as np
    import onnxruntime as ort
    dtypes = input_dtypes(wl["model"])
    feeds_entries, feeds = [], []
    for i, e in enumerate(check_entries(wl["entries"])):
        f = entry_feeds(e, dtypes, 7000 + i)
        paths = {}
        for n, a in f.items():
            paths[n] = os.path.join(tmp, "check_%d_%s.npy" % (i, n))
            np.save(paths[n], a)
        feeds_entries.append({"feed": paths})
        feeds.append(f)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1
    sess = ort.InferenceSession(wl["model"], opts, providers=["CPUExecutionProvider"])
    outs_dir = os.path.join(tmp, "check_outs")
    subprocess.run(["rm", "-rf", outs_dir])
    res = run_dynrt(args, dict(wl, entries=feeds_entries), threads, 1, tmp, save=outs_dir)
    if "error" in res:
        return None, res["error"]
    err = 0.0
    names = [o.name for o in sess.get_outputs()]
    for k, f in enumerate(feeds):
        want = sess.run(None, f)
        # Output names are not file names: index.json says which file holds
        # each output (docs/onnx.md).
        with open(os.path.join(outs_dir, "run_%d" % k, "index.json")) as fi:
            files = {o["name"]: o["file"] for o in json.load(fi)["outputs"]}
        for n, w in zip(names, want):
            got = np.load(os.path.join(outs_dir, "run_%d" % k, files[n]))
            if got.shape != w.shape:
                return None, "output %s has shape %s, onnxruntime %s" % (n, got.shape, w.shape)
            err = max(err, float(np.max(np.abs(got.astype(np.float64) - w))) if w.size else 0.0)
    return err, None


# ------------------------------------------------------------- driver


def median_of(rounds, key):
    vals = [r[key] for r in rounds if r.get(key) is not None]
    return statistics.median(vals) if vals else None


def measure(args, wl, threads, repeat, rounds, tmp):
    """Alternating rounds; no further round once the cell has taken --cell-seconds (a slow engine)."""
    per = {e: [] for e in ENGINES}
    errors = {}
    start, done = time.perf_counter(), 0
    while done < rounds and (done == 0 or time.perf_counter() - start < args.cell_seconds):
        done += 1
        for e in ENGINES:
            if e in errors:
                continue
            r = run_dynrt(args, wl, threads, repeat, tmp) if e == "dynrt" else \
                run_peer(args, e, wl, threads, repeat, tmp)
            if "error" in r:
                errors[e] = r["error"]
            else:
                per[e].append(r)
    row = {"workload": wl["name"], "threads": threads, "shapes": len(wl["entries"]), "repeat": repeat,
           "rounds": done, "errors": errors}
    for e in ENGINES:
        for key in ("steady_ms", "first_ms", "setup_ms", "rss_mib", "total_ms"):
            row["%s_%s" % (e, key)] = median_of(per[e], key)
    row["dynrt_engine_peak_bytes"] = median_of(per["dynrt"], "engine_peak_bytes")
    return row


def ratio(row, key, peer):
    a, b = row.get("dynrt_" + key), row.get(peer + "_" + key)
    return "%.2f" % (a / b) if a is not None and b else "-"


def mib(v):
    return "%.0f" % v if v is not None else "-"


def print_table(rows, mem_row):
    head = ("| workload | threads | shapes x runs | rounds | steady dynrt/ort | steady dynrt/ov | new shape dynrt/ort "
            "| new shape dynrt/ov | setup dynrt/ort | setup dynrt/ov | peak RSS MiB dynrt / ort / ov "
            "| max abs err vs ort |")
    print(head)
    print("|" + "---|" * (head.count("|") - 1))
    for r in rows:
        err = "%.1e" % r["max_abs_err"] if r.get("max_abs_err") is not None else "-"
        print("| %s | %d | %d x %d | %d | %s | %s | %s | %s | %s | %s | %s / %s / %s | %s |" % (
            r["workload"], r["threads"], r["shapes"], r["repeat"], r["rounds"], ratio(r, "steady_ms", "ort"),
            ratio(r, "steady_ms", "ov"), ratio(r, "first_ms", "ort"), ratio(r, "first_ms", "ov"),
            ratio(r, "setup_ms", "ort"), ratio(r, "setup_ms", "ov"), mib(r["dynrt_rss_mib"]),
            mib(r["ort_rss_mib"]), mib(r["ov_rss_mib"]), err))
    if mem_row:
        r = mem_row
        print("\nmemory check: %s, %d distinct shapes, one run each, %d thread(s)\n" %
              (r["workload"], r["shapes"], r["threads"]))
        print("| engine | peak RSS MiB | whole schedule dynrt / engine |")
        print("|---|---|---|")
        for e in ENGINES:
            print("| %s | %s | %s |" % (e, mib(r[e + "_rss_mib"]), ratio(r, "total_ms", e)))
        if r.get("dynrt_engine_peak_bytes") is not None:
            print("\ndynrt engine peak bytes (report): %.1f MiB" % (r["dynrt_engine_peak_bytes"] / 2**20))


def dynrt_supports(binary, option):
    """Whether `binary run` has `option` (an older dynrt may lack it)."""
    try:
        out = subprocess.run([binary, "run", "--help"], capture_output=True, text=True, timeout=30)
    except OSError:
        return False
    return option in out.stdout + out.stderr


def versions():
    import numpy
    import onnxruntime
    import openvino
    return {"onnxruntime": onnxruntime.__version__, "openvino": openvino.__version__, "numpy": numpy.__version__}


def machine():
    cpu = platform.processor()
    try:
        for line in subprocess.run(["lscpu"], capture_output=True, text=True).stdout.splitlines():
            if line.startswith("Model name:"):
                cpu = line.split(":", 1)[1].strip()
    except OSError:
        pass
    return "%s, %d cores (os.cpu_count)" % (cpu, os.cpu_count())


def git_commit():
    try:
        return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"], capture_output=True,
                              text=True).stdout.strip()
    except OSError:
        return "?"


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--dynrt", default=os.path.join(ROOT, "build", "bin", "dynrt"))
    ap.add_argument("--models", default=os.path.join(ROOT, "tests", "models"))
    ap.add_argument("--work", default=os.path.join(ROOT, "build", "bench-cpu-work"),
                    help="folder for the generated models and the engines' files")
    ap.add_argument("--threads", default="1,2", help="thread counts, comma-separated")
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=5, help="runs of each shape in a row")
    ap.add_argument("--wide-repeat", type=int, default=3, help="runs of each shape of %s" % ", ".join(sorted(WIDE)))
    ap.add_argument("--cell-seconds", type=float, default=90,
                    help="no further round of a workload and thread count after this many seconds")
    ap.add_argument("--only", default="", help="workloads to run, comma-separated (corpus/NAME, memory)")
    ap.add_argument("--corpus", action="store_true", help="add the models of tests/models")
    ap.add_argument("--no-memory", action="store_true", help="leave out the 1000-shape memory check")
    ap.add_argument("--quick", action="store_true", help="smoke run: few shapes, 1 round, 2 runs per shape")
    ap.add_argument("--json", help="write the rows as JSON to this file")
    ap.add_argument("--no-venv", action="store_true")
    ap.add_argument("--worker", choices=["ort", "ov"], help=argparse.SUPPRESS)
    ap.add_argument("--plan", help=argparse.SUPPRESS)
    ap.add_argument("--out", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.worker:
        worker(args.worker, args.plan, args.out)
        return
    if not args.no_venv:
        ensure_venv(sys.argv[1:])
    if args.quick:
        args.rounds, args.repeat, args.wide_repeat = 1, 2, 2
    bench(args)


def bench(args):
    if not os.access(TIME, os.X_OK):
        sys.exit("bench_cpu.py needs GNU time at %s (apt-get install time) to read each engine's peak RSS" % TIME)
    tmp = os.path.join(args.work, "run")
    os.makedirs(tmp, exist_ok=True)
    args.dynrt_threads = dynrt_supports(args.dynrt, "--threads")
    # Older binaries have no levels and always write every run.
    args.dynrt_report_level = dynrt_supports(args.dynrt, "--report-level")
    if not args.dynrt_threads:
        print("note: %s run has no --threads option: dynrt runs with its own default threading" % args.dynrt,
              file=sys.stderr)
    threads = [int(t) for t in args.threads.split(",") if t]
    load_before = os.getloadavg()
    rows = [measure_workload(args, wl, t, tmp) for wl in workloads(args, args.work) for t in threads]
    mem_row = memory_check(args, threads[0], tmp)
    print_table(rows, mem_row)
    info = dict(versions(), dynrt=os.path.abspath(args.dynrt), commit=git_commit(), machine=machine(),
                dynrt_built=time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(os.path.getmtime(args.dynrt))),
                dynrt_threads_option=args.dynrt_threads, load_before=load_before, load_after=os.getloadavg(),
                rounds=args.rounds, repeat=args.repeat, wide_repeat=args.wide_repeat)
    print_footer(args, info, rows, mem_row)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "rows": rows, "memory": mem_row}, f, indent=1)


def measure_workload(args, wl, threads, tmp):
    repeat = args.wide_repeat if wl["name"] in WIDE else args.repeat
    t0 = time.perf_counter()
    row = measure(args, wl, threads, repeat, args.rounds, tmp)
    if "dynrt" not in row["errors"]:
        row["max_abs_err"], err = error_check(args, wl, threads, tmp)
        if err:
            row["errors"]["dynrt (error check)"] = err
    row["seconds"] = time.perf_counter() - t0
    print(json.dumps(row), file=sys.stderr)
    return row


def memory_check(args, threads, tmp):
    """The 64-wide KV decode over 1000 distinct shapes, one run each, one round."""
    if args.no_memory or (args.only and "memory" not in args.only.split(",")):
        return None
    path = os.path.join(args.work, "kv64_memory.onnx")
    kv_model(path, 64, 3)
    seqs = range(1, 41 if args.quick else 1001)
    wl = {"name": "kv64 memory", "model": path, "entries": [{"shapes": s} for s in kv_shapes(64, seqs)]}
    row = measure(args, wl, threads, 1, 1, tmp)
    print(json.dumps(row), file=sys.stderr)
    return row


def print_footer(args, info, rows, mem_row):
    print("\nonnxruntime %s (CPUExecutionProvider, inter-op 1), OpenVINO %s (CPU, f32, LATENCY, 1 stream)" %
          (info["onnxruntime"], info["openvino"]))
    print("%d round(s), %d runs per shape (%d for %s)" %
          (args.rounds, args.repeat, args.wide_repeat, ", ".join(sorted(WIDE))))
    print("dynrt %s, built %s, checkout at %s%s" %
          (info["dynrt"], info["dynrt_built"], info["commit"],
           "" if args.dynrt_threads else " (its run command has no --threads option: default threading)"))
    print("%s; load average (1, 5, 15 min) before: %.2f %.2f %.2f, after: %.2f %.2f %.2f" %
          ((info["machine"],) + info["load_before"] + info["load_after"]))
    failed = [(r["workload"], r["threads"], e, m) for r in rows + ([mem_row] if mem_row else [])
              for e, m in r["errors"].items()]
    if failed:
        print("\ncould not run:")
        for w, t, e, m in failed:
            print("  %s, %d thread(s), %s: %s" % (w, t, e, m))
    print("\nabsolute medians (ms): steady / first at a new shape / setup")
    for r in rows:
        print("  %s t=%d: %s" % (r["workload"], r["threads"], ", ".join(
            "%s %s / %s / %s" % (e, fmt(r[e + "_steady_ms"]), fmt(r[e + "_first_ms"]), fmt(r[e + "_setup_ms"]))
            for e in ENGINES)))


def fmt(v):
    return "%.3f" % v if v is not None else "-"


if __name__ == "__main__":
    main()
