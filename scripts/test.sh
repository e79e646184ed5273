#!/usr/bin/env bash
# The whole test suite: installs what is missing, builds, runs ctest.
#   ./scripts/test.sh              build/ (Release), every test
#   ./scripts/test.sh --sanitize   build-asan/ with AddressSanitizer + UBSan, built by clang
# CI=true turns warnings into errors.
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"
dir="$DYNRT_ROOT/build"
args=()
ctest_args=()
if [ "${1:-}" = "--sanitize" ]; then
  dir="$DYNRT_ROOT/build-asan"
  # clang, as the asan preset: the second compiler of CI, and its
  # compile_commands.json feeds ./scripts/lint.sh --tidy build-asan. The
  # libFuzzer harnesses are built here too (coverage instrumentation on
  # everything), so DYNRT_FUZZ_TREE=build-asan ./scripts/fuzz.sh runs them
  # without a sanitizer build of its own.
  args+=(-DDYNRT_SANITIZE=address,undefined -DDYNRT_BUILD_BENCHMARKS=OFF -DDYNRT_BUILD_FUZZERS=ON
    -DCMAKE_C_COMPILER=clang -DCMAKE_CXX_COMPILER=clang++ -DCMAKE_EXPORT_COMPILE_COMMANDS=ON)
  # A tree configured with another compiler cannot switch in place.
  if grep -qs '^CMAKE_CXX_COMPILER:.*g++' "$dir/CMakeCache.txt"; then rm -rf "$dir/CMakeCache.txt" "$dir/CMakeFiles"; fi
  # Debug at -O1, as ASan's docs advise: the fuzz harnesses built here need
  # the speed (in 30 s the YAML harness ran 1.5 thousand inputs at -O0, 395
  # thousand in scripts/fuzz.sh's own RelWithDebInfo build).
  export DYNRT_BUILD_TYPE=Debug
  args+=(-DCMAKE_C_FLAGS_DEBUG="-g -O1" -DCMAKE_CXX_FLAGS_DEBUG="-g -O1")
  DYNRT_SANITIZE_RUN=1
  export ASAN_OPTIONS="detect_leaks=1:abort_on_error=0:${ASAN_OPTIONS:-}"
  # PoCL's default device runs kernels on worker threads that are still alive
  # when LeakSanitizer stops the world at exit, which can crash its tracer; the
  # single-threaded "basic" device avoids that (same kernels, same results).
  export POCL_DEVICES="${POCL_DEVICES:-basic}"
  # The same for OpenMP's worker threads (the cpu engine's optimised impls):
  # the cpu engine computes on one thread here, so none are alive at exit.
  # cpu_sdk_test still runs the parallel loop on several threads.
  export DYNRT_CPU_THREADS="${DYNRT_CPU_THREADS:-1}"
  # use_tls=0: clang 14's LeakSanitizer misreads the dynamic TLS blocks of
  # libraries loaded with dlopen (the op modules, oneDNN, OpenMP) when it
  # scans threads at exit and crashes ("Tracer caught signal 11", a bogus
  # "DTLS" range in LSAN_OPTIONS=verbosity=1:log_threads=1), failing tests
  # that passed. Thread-local blocks are then not leak roots; dynrt keeps no
  # heap memory reachable only from them.
  export LSAN_OPTIONS="suppressions=$DYNRT_ROOT/scripts/lsan.supp:print_suppressions=0:use_tls=0:${LSAN_OPTIONS:-}"
  export UBSAN_OPTIONS="print_stacktrace=1:halt_on_error=1:${UBSAN_OPTIONS:-}"
  # The sanitizers check host code: the OpenCL kernels the tests here build
  # are compiled unoptimised (about half the build time on PoCL); the release
  # run tests their optimised builds.
  export DYNRT_OCL_BUILD_OPTIONS="${DYNRT_OCL_BUILD_OPTIONS--cl-opt-disable}"
  # The sanitizers check host code, so the tests whose time goes into OpenCL
  # kernels they cannot see stay out: the whole-folder runs on the ocl device
  # (sweep_*_ocl, onnx_node_*_ocl, onnx_data_*_ocl, onnx_model_*_ocl) and each
  # op's impl-vs-reference and dynamic-sequence gtests (<Op>Impls.*,
  # <Op>Dynamic.*, <Op>Ocl.*, and their value-parameterised <Op>Impls/<Table>.*),
  # which build a kernel per shape on PoCL's single-threaded device, and
  # activation's NaN/infinity matrix (ActivationSpecials.EveryImpl*: a kernel
  # per function, two minutes here). The cpu
  # impls still run under the sanitizers in
  # sweep_*_cpu (every impl against the reference over changing shapes),
  # onnx_node_*_cpu, the model corpus and the ops' shape and value tests; the
  # OpenCL host code in tests/ocl_*_test and the flow tests on both devices.
  # The real-model corpus (onnx_corpus_*) runs the import and the flow that
  # tests/models and the flow tests already run here, on graphs 10-100 times
  # larger: under the sanitizers it would cost minutes for little new host
  # code, so it runs in the release job only.
  ctest_args+=(-E '_ocl$|^[A-Za-z]+(Impls|Dynamic|Ocl)[./]|^ActivationSpecials\.EveryImpl|^onnx_corpus_')
fi
if [ "${CI:-}" = "true" ]; then args+=(-DDYNRT_WERROR=ON); fi
# One OpenCL kernel cache for the whole run (ctest's processes share it, so
# each kernel is compiled once per run), inside the checkout so a run never
# depends on a user's cache: dynrt's binary cache, and PoCL's own, which dynrt
# relies on instead of its own on PoCL (docs/opencl.md, DYNRT_OCL_BINARY_CACHE).
export DYNRT_CACHE_DIR="${DYNRT_CACHE_DIR:-$DYNRT_ROOT/build-kernel-cache}"
export POCL_CACHE_DIR="${POCL_CACHE_DIR:-$DYNRT_CACHE_DIR/pocl}"
mkdir -p "$POCL_CACHE_DIR"
dynrt_install_packages
dynrt_build "$dir" "${args[@]}"
cd "$dir"
run_ctest() { ctest --output-on-failure -j "$(nproc 2>/dev/null || echo 2)" --timeout 600 "$@"; }
if [ -z "${DYNRT_SANITIZE_RUN:-}" ]; then
  # The value checks build their OpenCL kernels with -cl-opt-disable, which
  # on PoCL takes about half the time of an optimised build (a static OpenCL
  # impl compiles a program per shape): each op's impl-vs-reference matrices
  # (<Op>Impls.*, <Op>Impls/<Table>.*), its dynamic sequence on one network
  # (<Op>Dynamic.*), and the ONNX node, multi-node and data tests on ocl
  # (onnx_node_*_ocl, onnx_graphs_ocl, onnx_data_*_ocl), which compare values
  # with the reference or the ONNX data. Every other test builds the kernels
  # optimised, as users run them: each op's sweep (sweep_*_ocl, every impl
  # against the reference over changing shapes), the model tests and the
  # corpus, the flow, fusion and OpenCL suites.
  matrices='^[A-Za-z]+(Impls|Dynamic)[./]|^onnx_(node_[a-z_0-9]+|graphs|data_[-a-z_0-9]+)_ocl$'
  status=0
  DYNRT_OCL_BUILD_OPTIONS="${DYNRT_OCL_BUILD_OPTIONS--cl-opt-disable}" run_ctest -R "$matrices" || status=1
  run_ctest -E "$matrices" || status=1
  exit "$status"
fi
if run_ctest "${ctest_args[@]}"; then exit 0; fi
# Under the sanitizers only: LeakSanitizer's stop-the-world tracer can crash at
# exit ("Tracer caught signal 11") while driver threads wind down, failing a
# test that passed. Failed tests run once more, and any that pass then are
# named in a warning. clang 14's tracer crashes this way every time in tests
# whose OpenCL driver or background-build threads are alive at exit, so the
# re-run leaves LeakSanitizer out (AddressSanitizer and UBSan still check them;
# the flag goes last: a later flag overrides an earlier one).
failed="$(sed 's/^[0-9]*:/  /' Testing/Temporary/LastTestsFailed.log 2>/dev/null)"
echo "test.sh: re-running the failed tests once, without LeakSanitizer:" >&2
echo "$failed" >&2
ASAN_OPTIONS="${ASAN_OPTIONS}:detect_leaks=0" ctest --rerun-failed --output-on-failure --timeout 600 || exit 1
echo "test.sh: WARNING: these tests failed once under the sanitizers (LeakSanitizer's tracer) and passed when re-run without LeakSanitizer:" >&2
echo "$failed" >&2
