# Shared by bootstrap.sh and test.sh: package check and the build.
set -euo pipefail
DYNRT_ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
DYNRT_PACKAGES=(g++ clang clang-tidy clang-format cmake make pkg-config python3
  libboost-dev libboost-program-options-dev libyaml-cpp-dev
  ocl-icd-opencl-dev opencl-headers pocl-opencl-icd clinfo
  libgtest-dev libbenchmark-dev libclblast-dev
  libonnx-dev libprotobuf-dev libonnx-testdata protobuf-compiler
  libdnnl-dev libomp-dev
  python3-dev python3-pybind11 python3-numpy python3-pytest)
# More packages for one job, space-separated: .ci/run sets "chromium", in
# which tests/plot_test.cpp draws the pages of `dynrt plot` (without it that
# test is skipped, so a developer's machine does not need a browser).
read -r -a _dynrt_extra <<< "${DYNRT_EXTRA_PACKAGES:-}"
DYNRT_PACKAGES+=("${_dynrt_extra[@]}")

dynrt_install_packages() {
  local missing=()
  for p in "${DYNRT_PACKAGES[@]}"; do
    dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
  done
  if [ ${#missing[@]} -eq 0 ]; then return 0; fi
  echo "dynrt: installing ${missing[*]}" >&2
  local sudo=""
  if [ "$(id -u)" -ne 0 ]; then sudo="sudo"; fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
}

# dynrt_build <build dir> [extra cmake args...]
dynrt_build() {
  local dir="$1"; shift
  local jobs
  jobs="$(nproc 2>/dev/null || echo 2)"
  cmake -S "$DYNRT_ROOT" -B "$dir" -DCMAKE_BUILD_TYPE="${DYNRT_BUILD_TYPE:-Release}" "$@" >/dev/null
  cmake --build "$dir" -j "$jobs"
}
