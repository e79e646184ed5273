#!/usr/bin/env bash
# Fills .gpu-libs/ (git-ignored) with the shared libraries the binaries of
# build/ need that a GPU machine (Ubuntu 24.04 with NVIDIA's driver, without
# Boost, yaml-cpp, GoogleTest, Google Benchmark, CLBlast, oneDNN or the OpenCL ICD
# loader) lacks. Run on the build machine after a Release build:
#   ./scripts/pack-gpu-libs.sh [build dir, default build]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${1:-$root/build}"
out="$root/.gpu-libs"
mkdir -p "$out"
shopt -s nullglob
bins=("$build"/bin/* "$build"/lib/*.so "$build"/lib/dynrt/*.so)
if [ ${#bins[@]} -eq 0 ]; then
  echo "pack-gpu-libs: nothing built in $build" >&2
  exit 1
fi
libs="$(ldd "${bins[@]}" 2>/dev/null | awk '/yaml|boost|OpenCL|clblast|gtest|gmock|benchmark|onnx|protobuf|dnnl|gomp/ && $3 ~ /^\// {print $3}' | sort -u)"
for l in $libs; do
  cp -L "$l" "$out/"
  echo "pack-gpu-libs: $(basename "$l")"
done
grep -q 'gpu-libs' "$root/.gitignore" 2>/dev/null || echo "pack-gpu-libs: note: add .gpu-libs/ to .gitignore" >&2
