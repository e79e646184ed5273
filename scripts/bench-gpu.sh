#!/usr/bin/env bash
# The whole GPU set in one command, on the GPU machine, from a prebuilt Release
# build/ and .gpu-libs/ (scripts/pack-gpu-libs.sh) copied with the tree:
#   ./scripts/bench-gpu.sh [report dir]
# or from out/gpu-bundle.tar.xz (scripts/pack-gpu-bundle.sh), unpacked first.
# Report dir: the argument, else $OUT, else gpu-report/. It receives
#   summary.md            device, test result, per-config results, key figures
#   ctest.log             the OpenCL test suite (ctest -R "ocl|Ocl")
#   run_<config>.json/.log  `dynrt run <config> --device ocl --report`
#   decode_*.json, decode.txt  configs/llm_decode_kv.yaml on ocl with in-place
#                         concat and the pool on and off (scripts/decode_figures.py)
#   ocl_bench.json/.txt   benchmarks/ocl_bench.cpp (memory-bound, GEMM, CLBlast, host work,
#                         convolution), with tables of the memory-bound ops against the
#                         copy kernel and of the convolutions in summary.md
#   ocl_ops.json/.txt     step ocl_ops (not in the default set): ocl_bench's copy,
#                         memory-bound and convolution rows alone, same tables
#   flow_bench.json/.txt  benchmarks/flow_bench.cpp
# Every step runs even if an earlier one fails; the exit status is the number
# of failed steps (0 = all good).
# Knobs: OCL_BENCH_ARGS (e.g. "--mib=16 --max-dim=512" for a small run),
# DYNRT_BENCH_MIN_TIME (seconds per benchmark, default 0.2), DYNRT_BUILD_DIR
# (default build/), DYNRT_GPU_STEPS (the steps to run, default
# "tests configs decode ocl_bench flow_bench": a GPU session's time limit may
# call for two runs; ocl_ops runs only if named), DYNRT_STEP_TIMEOUT (seconds one step may take, default
# 540; a step that runs out counts as failed and the next one runs).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
report="${1:-${OUT:-$root/gpu-report}}"
mkdir -p "$report"
build="${DYNRT_BUILD_DIR:-$root/build}"
# A bundle from scripts/pack-gpu-bundle.sh, when the build is not here yet
# (before gpu-env.sh, which looks for .gpu-libs/): the build, .gpu-libs/ and
# the ONNX node tests, which go where the build looks for them.
if [ ! -x "$build/bin/dynrt" ] && [ -f "$root/out/gpu-bundle.tar.xz" ]; then
  echo "== unpack out/gpu-bundle.tar.xz" >&2
  tar -xJf "$root/out/gpu-bundle.tar.xz" -C "$root"
  node=/usr/share/libonnx-testdata/data/node
  if [ -d "$root/usr/share/libonnx-testdata/data/node" ] && [ ! -e "$node" ]; then
    mkdir -p "$(dirname "$node")" && ln -s "$root/usr/share/libonnx-testdata/data/node" "$node"
  fi
fi
source "$root/scripts/gpu-env.sh"
export DYNRT_MODULE_PATH="$build/lib/dynrt"
export DYNRT_CACHE_DIR="${DYNRT_CACHE_DIR:-${TMPDIR:-/tmp}/dynrt-gpu-cache}"
failed=0
summary="$report/summary.md"
steps=" ${DYNRT_GPU_STEPS:-tests configs decode ocl_bench flow_bench} "
limit="${DYNRT_STEP_TIMEOUT:-540}"
step() { echo "== $*" >&2; }
want() { [[ "$steps" == *" $1 "* ]]; }

# The test executables carry the build machine's paths (module and data
# folders): when the tree was copied elsewhere, point those paths here.
orig_src="$(sed -n 's/^CMAKE_HOME_DIRECTORY:INTERNAL=//p' "$build/CMakeCache.txt" 2>/dev/null)"
if [ -n "$orig_src" ] && [ "$orig_src" != "$root" ] && [ ! -e "$orig_src" ]; then
  mkdir -p "$(dirname "$orig_src")" 2>/dev/null && ln -s "$root" "$orig_src" 2>/dev/null &&
    echo "bench-gpu: linked $orig_src -> $root" >&2 ||
    echo "bench-gpu: cannot link $orig_src; tests may not find their modules" >&2
fi

{
  echo "# dynrt GPU report"
  echo
  echo "- date: $(date -u +%Y-%m-%dT%H:%M:%SZ)"
  echo "- host: $(uname -srm)"
  command -v nvidia-smi >/dev/null && echo "- gpu: $(nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null | head -1)"
  echo "- commit: $(git -C "$root" rev-parse --short HEAD 2>/dev/null || echo unknown)"
  echo
} > "$summary"

step "modules"
"$build/bin/dynrt" ops > "$report/modules.log" 2>&1 || true

if want tests; then
step "ctest -R ocl|Ocl"
if (cd "$build" && timeout "$limit" ctest -R "ocl|Ocl" --output-on-failure --timeout 600 -j 4) > "$report/ctest.log" 2>&1; then
  test_result="passed"
else
  test_result="FAILED"
  failed=$((failed + 1))
fi
{
  echo "## OpenCL tests: $test_result"
  echo
  echo '```'
  grep -E "tests passed|tests failed|Failed|\*\*\*|Total Test time" "$report/ctest.log" | tail -40
  echo '```'
  echo
} >> "$summary"
fi

if want configs; then
step "dynrt run configs on --device ocl"
{
  echo "## Pipelines on --device ocl"
  echo
  echo "| config | result |"
  echo "|---|---|"
} >> "$summary"
for cfg in "$root"/configs/*.yaml; do
  name="$(basename "$cfg" .yaml)"
  t0=$(date +%s)
  if timeout "$limit" "$build/bin/dynrt" run "$cfg" --device ocl --report "$report/run_$name.json" -v \
       > "$report/run_$name.log" 2>&1; then
    echo "| $name | ok ($(( $(date +%s) - t0 )) s) |" >> "$summary"
  else
    echo "| $name | FAILED (see run_$name.log) |" >> "$summary"
    failed=$((failed + 1))
  fi
done
echo >> "$summary"
fi

if want decode; then
  # The KV-cache decode loop (1024 steps) with in-place concat and the pool on
  # (the config as it is), off, and off without preallocation: allocations,
  # copies, peak, time per step.
  step "decode figures"
  cfg="$root/configs/llm_decode_kv.yaml"
  sed 's|^run: {device: auto, seed: 42}|run: {device: auto, seed: 42, inplace_concat: false, memory_pool: false}|' \
    "$cfg" > "$report/llm_decode_kv_off.yaml"
  ok=1
  for v in on off off_nopre; do
    c="$cfg"
    extra=()
    [ "$v" != on ] && c="$report/llm_decode_kv_off.yaml"
    [ "$v" = off_nopre ] && extra=(--prealloc "0 0 0 1.0")
    timeout "$limit" "$build/bin/dynrt" run "$c" --device ocl "${extra[@]}" --report-level runs --report "$report/decode_$v.json" \
      > "$report/decode_$v.log" 2>&1 || ok=0
  done
  {
    echo "## Decode (llm_decode_kv, ocl): in-place + pool on, off, off without preallocation"
    echo
    echo '```'
    if [ $ok = 1 ] && python3 "$root/scripts/decode_figures.py" "$report/decode_on.json" "$report/decode_off.json" \
         "$report/decode_off_nopre.json" > "$report/decode.txt" 2>&1; then
      cat "$report/decode.txt"
    else
      echo "FAILED (see decode_on.log, decode_off.log, decode.txt)"
      failed=$((failed + 1))
    fi
    echo '```'
    echo
  } >> "$summary"
fi

# Tables of ocl_bench's JSON: the memory-bound ops against the copy kernel of
# the same run (goal: >= 0.70 of its GB/s) and the convolutions, static and
# shape-agnostic side by side.
ocl_tables() {
  python3 - "$1" <<'PY'
import json, sys
def load(path):  # a run cut short by the step's timeout leaves the array open: close it after the last row
    text = open(path).read()
    try:
        return json.loads(text)["benchmarks"]
    except ValueError:
        return json.loads(text[:text.rindex("}") + 1] + "]}")["benchmarks"]
try:
    rows = load(sys.argv[1])
except (OSError, ValueError, KeyError) as e:
    sys.exit("no tables: %s is not a benchmark report (%s)" % (sys.argv[1], e))
rows = [b for b in rows if b.get("run_type", "iteration") == "iteration"]
def name(b):
    return b["name"].replace("/manual_time", "")
def pairs(test):  # rows ocl/<case>/<impl> by case, then impl (the first repetition)
    cases = {}
    for b in rows:
        parts = name(b).split("/")
        if len(parts) == 3 and parts[2] in ("ocl_static", "ocl_dynamic") and test(parts[1]):
            cases.setdefault(parts[1], {}).setdefault(parts[2], b)
    return cases
def cell(b, key, fmt=None, why=False):  # fmt None: 3 digits, no decimals from 100 on; why: a skip's message here
    if b is not None and b.get("error_occurred"):
        return "skipped: " + b.get("error_message", "")[:80] if why else "-"
    if b is None or key not in b: return "-"
    return (fmt or ("%.0f" if abs(b[key]) >= 100 else "%.3g")) % b[key]
copy = [b for b in rows if name(b) == "ocl/copy_kernel" and "GB/s" in b]
mem = pairs(lambda case: not case.startswith("conv"))
if mem:
    print("## Memory-bound ops against the copy kernel (GB/s read + written; goal >= 0.70 of copy)\n")
    if copy: print("copy kernel: %s GB/s at %.0f MiB\n" % (cell(copy[0], "GB/s"), copy[0]["MiB"]))
    print("| op | shapes | static GB/s | of copy | dynamic GB/s | of copy | >= 0.70 |")
    print("|---|---|---|---|---|---|---|")
    for case, v in mem.items():
        s, d = v.get("ocl_static"), v.get("ocl_dynamic")
        ratios = [b["of_copy"] for b in (s, d) if b and "of_copy" in b]
        ok = "-" if not ratios else ("yes" if min(ratios) >= 0.70 else "NO")
        cells = [cell(s, "GB/s", why=True), cell(s, "of_copy", "%.2f"), cell(d, "GB/s", why=True),
                 cell(d, "of_copy", "%.2f"), ok]
        print("| " + " | ".join([case, (s or d).get("label", "")] + cells) + " |")
    print()
conv = pairs(lambda case: case.startswith("conv"))
if conv:
    print("## Convolution (GFLOP/s and ms per run: device time, median over iterations)\n")
    print("| conv | shapes | static GFLOP/s | ms | dynamic GFLOP/s | ms | dyn / static |")
    print("|---|---|---|---|---|---|---|")
    for case, v in conv.items():
        s, d = v.get("ocl_static"), v.get("ocl_dynamic")
        cells = [cell(s, "GFLOP/s", why=True), cell(s, "ms_per_run"), cell(d, "GFLOP/s", why=True),
                 cell(d, "ms_per_run"), cell(d, "dyn_over_static", "%.2f")]
        print("| " + " | ".join([case, (s or d).get("label", "")] + cells) + " |")
    print()
PY
}

min_time="${DYNRT_BENCH_MIN_TIME:-0.2}"
# ocl_ops: ocl_bench's copy, memory-bound and convolution rows alone.
ops_filter='^ocl/(copy_kernel|eltwise_add|activation_relu|concat_halves|transpose_|expand_|slice_|where|cast_|reduce_|layer_norm|gather_|conv)'
for bench in ocl_bench ocl_ops flow_bench; do
  want "$bench" || continue
  step "$bench"
  args=()
  exe="$bench"
  [ "$bench" = ocl_bench ] && read -r -a args <<< "${OCL_BENCH_ARGS:-}"
  if [ "$bench" = ocl_ops ]; then
    exe=ocl_bench
    read -r -a args <<< "${OCL_BENCH_ARGS:-}"
    args+=("--benchmark_filter=$ops_filter")
  fi
  if [ ! -x "$build/bin/$exe" ]; then
    echo "## $bench: not built" >> "$summary"
    failed=$((failed + 1))
    continue
  fi
  if timeout "$limit" "$build/bin/$exe" "${args[@]}" --benchmark_min_time="$min_time" --benchmark_counters_tabular=true \
       --benchmark_out="$report/$bench.json" --benchmark_out_format=json > "$report/$bench.txt" 2>&1; then
    r="ok"
  else
    r="FAILED"
    failed=$((failed + 1))
  fi
  {
    echo "## $bench: $r"
    echo
    echo '```'
    grep -vE "^\*\*\*WARNING|^-+$" "$report/$bench.txt" | cut -c1-220
    echo '```'
    echo
    [ "$exe" = ocl_bench ] && ocl_tables "$report/$bench.json" 2>&1
  } >> "$summary"
done

echo "failed steps: $failed" >> "$summary"
echo "bench-gpu: report in $report ($failed failed steps)" >&2
exit "$failed"
