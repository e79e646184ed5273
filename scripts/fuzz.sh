#!/usr/bin/env bash
# Runs the libFuzzer harnesses (fuzz/) for a bounded time each.
#   ./scripts/fuzz.sh [SECONDS] [HARNESS...]    default: 60 s each, every harness
# Builds build-fuzz/ with clang, ASan + UBSan and coverage instrumentation,
# seeds each corpus from configs/, tests/data/ and the ONNX node-test models
# (the graph harness, the differential graph fuzzer, starts from its
# regression inputs: any bytes decode to a graph),
# and fails on any finding (crash, sanitizer report, exception other than
# dynrt::Error, allocation over 1 GiB, timeout). A finding's input lands in
# <tree>/findings/<harness>/: fix the bug, then copy the input into
# fuzz/regressions/<harness>/ so ctest replays it from then on.
# DYNRT_FUZZ_TREE=DIR runs the harnesses of a tree already built with them
# (-DDYNRT_BUILD_FUZZERS=ON, as ./scripts/test.sh --sanitize builds
# build-asan/): only the harnesses are built there, nothing is reconfigured.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
seconds="${1:-60}"
shift || true
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(npy yaml onnx shape_infer graph)
dir="${DYNRT_FUZZ_TREE:-$DYNRT_ROOT/build-fuzz}"
dynrt_install_packages
if [ -n "${DYNRT_FUZZ_TREE:-}" ]; then
  grep -qs '^DYNRT_BUILD_FUZZERS:BOOL=ON' "$dir/CMakeCache.txt" ||
    { echo "fuzz.sh: DYNRT_FUZZ_TREE=$dir is not a tree configured with -DDYNRT_BUILD_FUZZERS=ON" >&2; exit 2; }
else
  command -v clang++ >/dev/null || { echo "fuzz.sh: clang++ is missing (apt-get install clang)" >&2; exit 2; }
  CXX=clang++ DYNRT_BUILD_TYPE=RelWithDebInfo dynrt_build "$dir" -DCMAKE_CXX_COMPILER=clang++ \
    -DDYNRT_BUILD_FUZZERS=ON -DDYNRT_SANITIZE=address,undefined -DDYNRT_BUILD_TESTS=OFF -DDYNRT_BUILD_BENCHMARKS=OFF
fi
cmake --build "$dir" -j "$(nproc 2>/dev/null || echo 2)" --target $(printf 'fuzz_%s ' "${harnesses[@]}")

seed() {   # seed <harness> <files...>: copies the files into the harness's corpus
  local corpus="$dir/corpus/$1"; shift
  mkdir -p "$corpus"
  for f in "$@"; do [ -f "$f" ] && cp "$f" "$corpus/$(cksum < "$f" | cut -d' ' -f1)"; done
  return 0
}
seed npy "$DYNRT_ROOT"/tests/data/pipelines/*.npy
seed yaml "$DYNRT_ROOT"/configs/*.yaml "$DYNRT_ROOT"/tests/data/pipelines/*.yaml
# shellcheck disable=SC2046 # a list of model files
seed onnx $(find /usr/share/libonnx-testdata/data/node -name model.onnx 2>/dev/null | sort | awk 'NR % 8 == 0')
seed shape_infer
seed graph

# verify_asan_link_order=0: the build links clang's shared sanitizer runtime
# (modules need its symbols, CMakeLists.txt says why), and -fsanitize=fuzzer
# puts libFuzzer's dependencies before it in the executable's library list; the
# runtime is loaded all the same, so the start-up check is left out.
export ASAN_OPTIONS="detect_leaks=0:verify_asan_link_order=0:${ASAN_OPTIONS:-}"
export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
# The harnesses run side by side, as many at a time as there are cores (each
# is one process on one core), so the job takes about SECONDS x harnesses /
# cores; each writes its own log, reported in harness order at the end.
run_one() {   # run_one <harness>: its exit status lands in build-fuzz/fuzz_<harness>.status
  local h="$1" findings="$dir/findings/$1" start=$SECONDS status=0
  mkdir -p "$findings" "$dir/corpus/$h"
  "$dir/bin/fuzz_$h" "$dir/corpus/$h" "$DYNRT_ROOT/fuzz/regressions/$h" -max_total_time="$seconds" \
    -rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10 -artifact_prefix="$findings/" \
    -print_final_stats=1 > "$dir/fuzz_$h.log" 2>&1 || status=$?
  echo "$status $((SECONDS - start))" > "$dir/fuzz_$h.status"
}
cores="$(nproc 2>/dev/null || echo 2)"
for h in "${harnesses[@]}"; do
  while [ "$(jobs -rp | wc -l)" -ge "$cores" ]; do wait -n || true; done
  echo "fuzz.sh: $h for ${seconds}s" >&2
  rm -f "$dir/fuzz_$h.status"
  run_one "$h" &
done
wait
failed=()
for h in "${harnesses[@]}"; do
  read -r status took < "$dir/fuzz_$h.status" || { status=1; took=?; }
  if [ "$status" != 0 ]; then
    failed+=("$h")
    tail -40 "$dir/fuzz_$h.log" >&2
    echo "fuzz.sh: $h found a problem; input(s) in $dir/findings/$h/ (replay: $dir/bin/fuzz_$h <file>)" >&2
  fi
  grep -E '^stat::number_of_executed_units' "$dir/fuzz_$h.log" | sed "s/^/fuzz.sh: $h: /" >&2 || true
  echo "fuzz.sh: $h took ${took}s" >&2
done
if [ ${#failed[@]} -gt 0 ]; then echo "fuzz.sh: findings in: ${failed[*]}" >&2; exit 1; fi
echo "fuzz.sh: no findings (${harnesses[*]}, ${seconds}s each)"
