#!/usr/bin/env python3
"""Runs the real-model corpus (tests/corpus) on each device and prints one
status per model and device, with the counts per architecture:

    pass                  every data set, static and dynamic, within atol 1e-4
    unsupported (OP)      the import stops at an ONNX op dynrt lacks
    FAIL (max err E)      wrong numbers or an error; E is the largest |got - reference|
                          of the worst elements onnx-test names (inf: a shape or
                          dtype mismatch, an error)

and whether that agrees with tests/corpus/manifest.txt (the ctest tests
onnx_corpus_<model>_<device> check the same). Python's standard library only.

    scripts/corpus_report.py                        # cpu and ocl, build/
    scripts/corpus_report.py --devices cpu --only bert_dynamo,llama_kv_dynamo
    scripts/corpus_report.py --markdown table.md    # the table docs/onnx.md shows
    scripts/corpus_report.py --failures FILE        # each failing model's first lines of output
"""
import argparse
import os
import re
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)


def read_manifest(path):
    status = {}
    with open(path) as f:
        for n, line in enumerate(f, 1):
            line = line.split("#")[0].split()
            if not line:
                continue
            if line[1] not in ("pass", "unsupported") or (line[1] == "unsupported") != (len(line) == 3):
                raise SystemExit("%s:%d: want '<folder> pass' or '<folder> unsupported <op>[,<op>...]'" % (path, n))
            status[line[0]] = (line[1], line[2].split(",") if len(line) == 3 else [])
    return status


def run(dynrt, modules, folder, device):
    start = time.time()
    p = subprocess.run([dynrt, "onnx-test", folder, "--device", device, "--strict", "--atol", "1e-4",
                        "--modules-dir", modules], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    seconds = time.time() - start
    out = p.stdout
    if p.returncode == 0:
        return "pass", "", seconds, out
    missing = sorted(set(re.findall(r"unknown ONNX op '([^']+)'", out)))
    if missing:
        return "unsupported", ",".join(missing), seconds, out
    cases = [l for l in out.splitlines() if re.match(r"^(FAIL|error|unsupported)  ", l)]
    if cases and all(l.startswith("unsupported") for l in cases):
        return "unsupported", cases[0].split(": ", 1)[-1], seconds, out
    worst = 0.0
    for got, ref in re.findall(r"got (\S+), reference (\S+)", out):
        try:
            worst = max(worst, abs(float(got) - float(ref)))
        except ValueError:   # nan
            worst = float("inf")
    if not re.search(r"got \S+, reference", out) or re.search(r"^error  |: shape |: dtype ", out, re.M):
        worst = float("inf")
    return "FAIL", "%.3g" % worst, seconds, out


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--build", default=os.path.join(ROOT, "build"), help="the build folder (bin/dynrt, lib/dynrt)")
    ap.add_argument("--corpus", default=os.path.join(ROOT, "tests", "corpus"))
    ap.add_argument("--devices", default="cpu,ocl")
    ap.add_argument("--only", default="", help="comma-separated model folders")
    ap.add_argument("--markdown", default="", help="write the status table as markdown to this file")
    ap.add_argument("--failures", default="", help="write each failing model's first lines of output here")
    args = ap.parse_args()
    dynrt = os.path.join(args.build, "bin", "dynrt")
    modules = os.path.join(args.build, "lib", "dynrt")
    manifest = read_manifest(os.path.join(args.corpus, "manifest.txt"))
    folders = sorted(d for d in os.listdir(args.corpus) if os.path.exists(os.path.join(args.corpus, d, "model.onnx")))
    unlisted = [d for d in folders if d not in manifest]
    if unlisted:
        raise SystemExit("no line in manifest.txt: " + ", ".join(unlisted))
    if args.only:
        folders = [d for d in folders if d in args.only.split(",")]
    devices = args.devices.split(",")

    results = {}   # (folder, device) -> (status, detail, seconds, output)
    disagree = []
    for d in folders:
        row = []
        for dev in devices:
            r = run(dynrt, modules, os.path.join(args.corpus, d), dev)
            results[(d, dev)] = r
            want, ops = manifest[d]
            ok = r[0] == want if want == "pass" else (r[0] == "unsupported" and set(r[1].split(",")) & set(ops))
            if not ok:
                disagree.append("%s on %s: manifest says %s, got %s" % (d, dev, " ".join([want] + ops), r[0]))
            row.append("%-28s" % (r[0] + (" (%s)" % r[1] if r[1] else "")) + " %5.1f s" % r[2])
        print("%-28s %s" % (d, "  ".join(row)), flush=True)

    # Counts per architecture (the folder without its exporter) and device.
    print("\narchitecture        " + "".join("%-24s" % ("%s pass/unsup/FAIL" % dev) for dev in devices))
    archs = sorted({d.rsplit("_", 1)[0] for d in folders})
    totals = {dev: [0, 0, 0] for dev in devices}
    for a in archs:
        cells = []
        for dev in devices:
            c = [0, 0, 0]
            for d in folders:
                if d.rsplit("_", 1)[0] == a:
                    c[["pass", "unsupported", "FAIL"].index(results[(d, dev)][0])] += 1
            totals[dev] = [t + x for t, x in zip(totals[dev], c)]
            cells.append("%-24s" % ("%d/%d/%d" % tuple(c)))
        print("%-20s%s" % (a, "".join(cells)))
    print("%-20s%s" % ("total", "".join("%-24s" % ("%d/%d/%d" % tuple(totals[dev])) for dev in devices)))
    for dev in devices:
        print("%s: %.0f s in all" % (dev, sum(results[(d, dev)][2] for d in folders)))

    if args.markdown:
        # One row per architecture, one column per exporter and device, and the
        # architecture's counts over its models and devices.
        def cell(r):
            if r is None:
                return "-"   # not exported that way
            if r[0] == "pass":
                return "pass"
            if r[0] == "unsupported":
                return "unsupported (%s)" % r[1]
            return "**FAIL** (%s)" % r[1]
        exporters = sorted({d.rsplit("_", 1)[1] for d in folders})
        cols = [(e, dev) for e in exporters for dev in devices]
        with open(args.markdown, "w") as f:
            f.write("| architecture | %s | pass / unsupported / FAIL |\n" % " | ".join("%s: %s" % c for c in cols))
            f.write("|---|%s---|\n" % ("---|" * len(cols)))
            for a in archs:
                c = [0, 0, 0]
                cells = []
                for e, dev in cols:
                    r = results.get(("%s_%s" % (a, e), dev))
                    if r:
                        c[["pass", "unsupported", "FAIL"].index(r[0])] += 1
                    cells.append(cell(r))
                f.write("| %s | %s | %d / %d / %d |\n" % (a, " | ".join(cells), c[0], c[1], c[2]))
            col_counts = []
            for e, dev in cols:
                c = [0, 0, 0]
                for d in folders:
                    if d.rsplit("_", 1)[1] == e:
                        c[["pass", "unsupported", "FAIL"].index(results[(d, dev)][0])] += 1
                col_counts.append("%d / %d / %d" % tuple(c))
            f.write("| **models** | %s | %s |\n" % (" | ".join(col_counts), " + ".join(
                "%s %d / %d / %d" % ((dev,) + tuple(totals[dev])) for dev in devices)))
    if args.failures:
        with open(args.failures, "w") as f:
            for dev in devices:
                f.write("## %s\n\n" % dev)
                for d in folders:
                    s, detail, _, out = results[(d, dev)]
                    if s != "FAIL":
                        continue
                    lines = [l for l in out.splitlines() if re.match(r"^(FAIL|error)  ", l)]
                    f.write("- **%s**: max abs error %s\n" % (d, detail))
                    for l in lines[:3]:
                        f.write("    %s\n" % l[:400])
                f.write("\n")
    if disagree:
        print("\ndisagrees with manifest.txt:\n  " + "\n  ".join(disagree))
        sys.exit(1)


if __name__ == "__main__":
    main()
