#!/usr/bin/env bash
# ThreadSanitizer run of the concurrency suite (tests/concurrency_test.cpp):
# the tsan preset (clang, -fsanitize=thread, RelWithDebInfo) in build-tsan/,
# building only the modules and the suite's test binary, then the suite with
# halt_on_error (the first race fails the run) and the suppressions of
# scripts/tsan.supp (races inside the OpenCL runtime only, never dynrt code).
#   ./scripts/tsan.sh                 the whole concurrency suite
#   ./scripts/tsan.sh 'Concurrency.Gemm*'   a gtest filter
# DYNRT_TSAN_TIMEOUT bounds the test run (seconds, default 900).
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
cd "$DYNRT_ROOT"
filter="${1:-Concurrency.*}"
dir="$DYNRT_ROOT/build-tsan"
launcher=()
if command -v ccache >/dev/null 2>&1; then launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache); fi
dynrt_install_packages
cmake --preset tsan "${launcher[@]}" >/dev/null
cmake --build "$dir" -j "$(nproc 2>/dev/null || echo 2)" --target dynrt_modules concurrency_test

# OpenMP's runtimes (libgomp under oneDNN, libomp under the cpu SDK's loops)
# are not built with ThreadSanitizer, so their barriers are invisible to it:
# the cpu engine computes on one thread here. What the suite checks, requests
# sharing networks, impl caches and background builds, runs as before.
export DYNRT_CPU_THREADS=1
# LLVM's OpenMP runtime is not built with -fsanitize=thread: a worker that
# sleeps (the cpu engine's default passive wait) is woken through libomp's own
# atomics, which TSan cannot see, and it reports a race inside libomp between
# a mutex's init and its first lock. OpenMP's active wait keeps its workers
# off those mutexes; what this job checks is dynrt's own synchronisation.
export OMP_WAIT_POLICY=active
export TSAN_OPTIONS="halt_on_error=1:second_deadlock_stack=1:history_size=4:suppressions=$DYNRT_ROOT/scripts/tsan.supp:${TSAN_OPTIONS:-}"
# TSan's shadow memory needs a layout the kernel's full mmap randomisation can
# break ("unexpected memory mapping"); run without ASLR when setarch allows it.
run=()
if setarch "$(uname -m)" -R true 2>/dev/null; then run=(setarch "$(uname -m)" -R); fi
timeout --signal=KILL "${DYNRT_TSAN_TIMEOUT:-900}" "${run[@]}" "$dir/bin/concurrency_test" --gtest_filter="$filter"
