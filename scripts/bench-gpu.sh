#!/usr/bin/env bash
# The whole GPU set in one command, on the GPU machine, from a prebuilt Release
# build/ and .gpu-libs/ (scripts/pack-gpu-libs.sh) copied with the tree:
#   ./scripts/bench-gpu.sh [report dir]
# Report dir: the argument, else $OUT, else gpu-report/. It receives
#   summary.md            device, test result, per-config results, key figures
#   ctest.log             the OpenCL test suite (ctest -R "ocl|Ocl")
#   run_<config>.json/.log  `dynrt run <config> --device ocl --report`
#   decode_*.json, decode.txt  configs/llm_decode_kv.yaml on ocl with in-place
#                         concat and the pool on and off (scripts/decode_figures.py)
#   ocl_bench.json/.txt   benchmarks/ocl_bench.cpp (memory-bound, GEMM, CLBlast, host work)
#   flow_bench.json/.txt  benchmarks/flow_bench.cpp
# Every step runs even if an earlier one fails; the exit status is the number
# of failed steps (0 = all good).
# Knobs: OCL_BENCH_ARGS (e.g. "--mib=16 --max-dim=512" for a small run),
# DYNRT_BENCH_MIN_TIME (seconds per benchmark, default 0.2), DYNRT_BUILD_DIR
# (default build/), DYNRT_GPU_STEPS (the steps to run, default
# "tests configs decode ocl_bench flow_bench": a GPU session's time limit may
# call for two runs), DYNRT_STEP_TIMEOUT (seconds one step may take, default
# 540; a step that runs out counts as failed and the next one runs).
set -uo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
report="${1:-${OUT:-$root/gpu-report}}"
mkdir -p "$report"
build="${DYNRT_BUILD_DIR:-$root/build}"
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
    timeout "$limit" "$build/bin/dynrt" run "$c" --device ocl "${extra[@]}" --report "$report/decode_$v.json" \
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

min_time="${DYNRT_BENCH_MIN_TIME:-0.2}"
for bench in ocl_bench flow_bench; do
  want "$bench" || continue
  step "$bench"
  args=()
  [ "$bench" = ocl_bench ] && read -r -a args <<< "${OCL_BENCH_ARGS:-}"
  if [ ! -x "$build/bin/$bench" ]; then
    echo "## $bench: not built" >> "$summary"
    failed=$((failed + 1))
    continue
  fi
  if timeout "$limit" "$build/bin/$bench" "${args[@]}" --benchmark_min_time="$min_time" --benchmark_counters_tabular=true \
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
  } >> "$summary"
done

echo "failed steps: $failed" >> "$summary"
echo "bench-gpu: report in $report ($failed failed steps)" >&2
exit "$failed"
