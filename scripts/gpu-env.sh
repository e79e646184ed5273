#!/usr/bin/env bash
# Source this on a GPU machine with NVIDIA's driver before running dynrt
# binaries built elsewhere (the recipe of the GPU handbook page):
#   source scripts/gpu-env.sh
# - registers NVIDIA's OpenCL library with the ICD loader through a vendors
#   folder of our own (the machine has libnvidia-opencl.so.1 but no ICD file);
# - puts .gpu-libs/ of the repository (filled by scripts/pack-gpu-libs.sh on the
#   build machine: yaml-cpp, Boost, the OpenCL ICD loader, ...) first on
#   LD_LIBRARY_PATH.
# Safe to source twice. Prints what it did on stderr.
_dynrt_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
_dynrt_icd="${DYNRT_ICD_DIR:-${TMPDIR:-/tmp}/dynrt-icd}"
mkdir -p "$_dynrt_icd"
echo libnvidia-opencl.so.1 > "$_dynrt_icd/nvidia.icd"
export OCL_ICD_VENDORS="$_dynrt_icd"
if [ -d "$_dynrt_root/.gpu-libs" ]; then
  case ":${LD_LIBRARY_PATH:-}:" in
    *":$_dynrt_root/.gpu-libs:"*) ;;
    *) export LD_LIBRARY_PATH="$_dynrt_root/.gpu-libs${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}" ;;
  esac
else
  echo "gpu-env: no $_dynrt_root/.gpu-libs (run scripts/pack-gpu-libs.sh on the build machine)" >&2
fi
echo "gpu-env: OCL_ICD_VENDORS=$OCL_ICD_VENDORS LD_LIBRARY_PATH=${LD_LIBRARY_PATH:-}" >&2
unset _dynrt_root _dynrt_icd
