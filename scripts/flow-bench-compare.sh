#!/usr/bin/env bash
# The flow's host cost per primitive (benchmarks/flow_bench.cpp), this checkout
# next to another revision, side by side in one run:
#   ./scripts/flow-bench-compare.sh REV [ROUNDS]     (default ROUNDS 6)
# Builds flow_bench of REV in a git worktree (build-compare/<rev>/) and of this
# checkout in build/, then runs the two in turn ROUNDS times (each run: 5
# repetitions, their median), pinned to one core where taskset exists, and
# prints per benchmark the mean of the medians of each and their ratio.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
rev="${1:?usage: flow-bench-compare.sh REV [ROUNDS]}"
rounds="${2:-6}"
sha="$(git -C "$DYNRT_ROOT" rev-parse --short "$rev")"
other="$DYNRT_ROOT/build-compare/$sha"
if [ ! -d "$other/src" ]; then
  mkdir -p "$other"
  git -C "$DYNRT_ROOT" worktree add --detach "$other/src" "$sha" >/dev/null
fi
cmake -S "$other/src" -B "$other/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$other/build" --target flow_bench -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
cmake -S "$DYNRT_ROOT" -B "$DYNRT_ROOT/build" -DCMAKE_BUILD_TYPE=Release >/dev/null
cmake --build "$DYNRT_ROOT/build" --target flow_bench -j "$(nproc 2>/dev/null || echo 2)" >/dev/null
pin=()
command -v taskset >/dev/null && pin=(taskset -c 0)
filter='BM_Flow_ShapeUnchanged|BM_Flow_ShapeChangedCacheHit'
results="$(mktemp)"
trap 'rm -f "$results"' EXIT
for ((i = 0; i < rounds; ++i)); do
  for side in "$sha:$other/build" "this:$DYNRT_ROOT/build"; do
    "${pin[@]}" "${side#*:}/bin/flow_bench" --benchmark_filter="$filter" --benchmark_repetitions=5 \
      --benchmark_min_time=0.2 --benchmark_report_aggregates_only=true --benchmark_format=csv 2>/dev/null |
      awk -F, -v side="${side%%:*}" '/^name,/ { for (i = 1; i <= NF; ++i) { h[i] = $i; gsub(/"/, "", h[i]) } next }
        $1 ~ /_median"?$/ { for (i = 1; i <= NF; ++i) if (h[i] == "per_node_ns") print side, $1, $i * 1e9 }' >> "$results"
  done
done
awk -v other="$sha" '
  { gsub(/"/, "", $2); sub(/_median$/, "", $2); sum[$1 " " $2] += $3; n[$1 " " $2]++; names[$2] = 1 }
  END {
    printf "%-32s %14s %14s %8s\n", "benchmark (ns per primitive)", other, "this", "ratio"
    for (b in names) {
      o = sum[other " " b] / n[other " " b]; t = sum["this " b] / n["this " b]
      printf "%-32s %14.1f %14.1f %8.3f\n", b, o, t, t / o
    }
  }' "$results"
