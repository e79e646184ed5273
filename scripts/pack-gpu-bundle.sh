#!/usr/bin/env bash
# Packs what a GPU machine needs to run the OpenCL tests and benchmarks of a
# Release build made here into one compressed file, small enough to travel
# with the tree: out/gpu-bundle.tar.xz (out/ is git-ignored) holds the build's
# executables, libraries, modules and ctest files, .gpu-libs/
# (scripts/pack-gpu-libs.sh) and the ONNX node tests (libonnx-testdata), so the
# conformance tests run there too. scripts/bench-gpu.sh unpacks it when the
# build is not there yet.
#   ./scripts/pack-gpu-bundle.sh [build dir, default build]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$(cd "${1:-$root/build}" && pwd)"
[ -x "$build/bin/dynrt" ] || { echo "pack-gpu-bundle: no $build/bin/dynrt (build first)" >&2; exit 1; }
case "$build" in "$root"/*) ;; *) echo "pack-gpu-bundle: $build is not inside $root" >&2; exit 1 ;; esac
"$root/scripts/pack-gpu-libs.sh" "$build" > /dev/null
mkdir -p "$root/out"
list="$(mktemp)"
trap 'rm -f "$list"' EXIT
(
  cd "$root"
  rel="${build#"$root"/}"
  find "$rel" \( -path '*/CMakeFiles' -o -path "$rel/bench-*" \) -prune -o \( -name '*.cmake' -o -name CMakeCache.txt \) -print
  echo "$rel/bin"
  echo "$rel/lib"
  echo .gpu-libs
) > "$list"
node=/usr/share/libonnx-testdata/data/node
args=(-C "$root" -T "$list")
[ -d "$node" ] && args+=(-C / "${node#/}")
tar -cJf "$root/out/gpu-bundle.tar.xz" "${args[@]}"
echo "pack-gpu-bundle: out/gpu-bundle.tar.xz ($(du -h "$root/out/gpu-bundle.tar.xz" | cut -f1)); there: ./scripts/bench-gpu.sh"
