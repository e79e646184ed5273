#!/usr/bin/env bash
# The SDK end to end: install the build tree, build examples/clip_op against the
# *installed* package with the same compiler, drop the module into its own module
# folder, and use it from the CLI (`dynrt ops`, `dynrt run` on the example
# pipeline) with its outputs checked against an independent computation; build
# examples/embed (an application on dynrt::api) against the same package and
# check what it computes on a test model against the model's reference outputs.
#
#   sdk_test.sh --source DIR --build DIR --cxx COMPILER [--generator G]
#               [--build-type T] [--cxx-flags FLAGS] [--link-flags FLAGS] [--python PYTHON]
#
# Registered as the ctest `sdk_example_out_of_tree` (tests/sdk/CMakeLists.txt);
# set DYNRT_KEEP_TMP=1 to keep the temporary folder for a post-mortem.
set -uo pipefail

source_dir="" build_dir="" cxx="" generator="" build_type="" cxx_flags="" link_flags="" python="python3"
while [[ $# -gt 0 ]]; do
    case "$1" in
        --source) source_dir="$2"; shift 2 ;;
        --build) build_dir="$2"; shift 2 ;;
        --cxx) cxx="$2"; shift 2 ;;
        --generator) generator="$2"; shift 2 ;;
        --build-type) build_type="$2"; shift 2 ;;
        --cxx-flags) cxx_flags="$2"; shift 2 ;;
        --link-flags) link_flags="$2"; shift 2 ;;
        --python) python="$2"; shift 2 ;;
        *) echo "FAIL: unknown argument '$1'" >&2; exit 2 ;;
    esac
done

fail() {
    echo "FAIL: $*" >&2
    exit 1
}
# Runs a step quietly; on failure shows its output and fails naming the step.
step() {
    local what="$1"; shift
    echo "== $what"
    if ! "$@" > "$tmp/step.log" 2>&1; then
        cat "$tmp/step.log" >&2
        fail "$what (command: $*)"
    fi
}

[[ -n "$source_dir" && -n "$build_dir" && -n "$cxx" ]] || fail "--source, --build and --cxx are required"
cli="$build_dir/bin/dynrt"
[[ -x "$cli" ]] || fail "$cli not found: build the dynrt_cli target first"
[[ -d "$build_dir/lib/dynrt" ]] || fail "$build_dir/lib/dynrt not found: build the modules first"
command -v "$python" > /dev/null || fail "$python not found (the checks need Python 3, standard library only)"

tmp="$(mktemp -d "${TMPDIR:-/tmp}/dynrt_sdk_test.XXXXXX")"
if [[ "${DYNRT_KEEP_TMP:-0}" == 1 ]]; then
    echo "keeping $tmp"
else
    trap 'rm -rf "$tmp"' EXIT
fi
sdk="$tmp/sdk"

# 1. The SDK, installed from the build tree.
step "install the build tree into $sdk" cmake --install "$build_dir" --prefix "$sdk"
for f in include/dynrt/op_sdk.hpp include/dynrt/module_abi.hpp include/dynrt/shape.hpp; do
    [[ -f "$sdk/$f" ]] || fail "the install lacks $f"
done
config="$(find "$sdk" -name dynrtConfig.cmake -print -quit)"
[[ -n "$config" ]] || fail "the install lacks dynrtConfig.cmake"
[[ -f "$(dirname "$config")/DynrtModule.cmake" ]] || fail "the install lacks DynrtModule.cmake next to $config"
[[ -n "$(find "$sdk" -name 'libdynrt_core.so*' -print -quit)" ]] || fail "the install lacks libdynrt_core.so"

# 1b. The installed CLI, with no library path set, loads every module of its
# own module folder (their RUNPATHs find the SDK libraries in the prefix) and
# runs a model.
installed_modules="$(find "$sdk" -path '*/dynrt/libdynrt_*.so' | wc -l)"
build_modules="$(find "$build_dir/lib/dynrt" -maxdepth 1 -name 'libdynrt_*.so' | wc -l)"
[[ "$installed_modules" -eq "$build_modules" ]] ||
    fail "the install has $installed_modules modules, the build tree $build_modules"
installed_dir="$(dirname "$(find "$sdk" -path '*/dynrt/libdynrt_cpu.so' -print -quit)")"
echo "== installed dynrt ops --json"
env -u LD_LIBRARY_PATH -u DYNRT_MODULE_PATH "$sdk/bin/dynrt" ops --json > "$tmp/installed-ops.json" \
    2> "$tmp/installed-ops.err" || { cat "$tmp/installed-ops.err" >&2; fail "the installed dynrt ops exited with $?"; }
"$python" "$source_dir/tests/sdk/check_outputs.py" installed "$tmp/installed-ops.json" "$installed_dir" \
    "$build_modules" || fail "installed module check"
step "the installed dynrt runs a model" env -u LD_LIBRARY_PATH -u DYNRT_MODULE_PATH "$sdk/bin/dynrt" run \
    "$source_dir/tests/models/cnn/model.onnx" --device cpu --shapes "batch=1;height=16;width=16"

# 2. The examples, configured against the installed package only.
configure_example() {   # configure_example BUILD_DIR EXTRA_CXX_FLAGS [EXAMPLE]
    local cmd=(cmake -S "$source_dir/examples/${3:-clip_op}" -B "$1" -DCMAKE_CXX_COMPILER="$cxx"
               -DCMAKE_PREFIX_PATH="$sdk")
    [[ -n "$generator" ]] && cmd+=(-G "$generator")
    [[ -n "$build_type" ]] && cmd+=(-DCMAKE_BUILD_TYPE="$build_type")
    local flags="$cxx_flags $2"
    [[ -n "${flags// /}" ]] && cmd+=(-DCMAKE_CXX_FLAGS="$flags" -DCMAKE_MODULE_LINKER_FLAGS="$cxx_flags $link_flags"
                                     -DCMAKE_EXE_LINKER_FLAGS="$cxx_flags $link_flags")
    "${cmd[@]}"
}
# 2a. examples/embed: an application linking dynrt::api loads an ONNX model
# from the installed prefix (its modules found next to libdynrt_api.so, no
# library path set) and computes the model's reference outputs.
step "configure examples/embed against the installed SDK" configure_example "$tmp/embed-build" "" embed
step "build examples/embed" cmake --build "$tmp/embed-build" -j 2
[[ -x "$tmp/embed-build/embed" ]] || fail "the example build did not produce $tmp/embed-build/embed"
embed_model="$source_dir/tests/models/encoder"
mkdir -p "$tmp/embed-out" || fail "cannot create $tmp/embed-out"
step "examples/embed runs tests/models/encoder" env -u LD_LIBRARY_PATH -u DYNRT_MODULE_PATH \
    "$tmp/embed-build/embed" "$embed_model/model.onnx" "$embed_model/test_data_set_0" "$tmp/embed-out" cpu
"$python" "$source_dir/tests/sdk/check_outputs.py" model "$tmp/embed-out" "$embed_model/test_data_set_0" 1e-4 ||
    fail "examples/embed output check"
step "configure examples/clip_op against the installed SDK" configure_example "$tmp/clip-build" ""
if grep -q "dynrt: module" "$tmp/step.log"; then
    cat "$tmp/step.log" >&2
    fail "dynrt_add_module warns about the compiler although it is the SDK's own"
fi
found="$(sed -n 's/^dynrt_DIR:PATH=//p' "$tmp/clip-build/CMakeCache.txt")"
[[ "$(realpath "$found")" == "$(realpath "$(dirname "$config")")" ]] ||
    fail "find_package(dynrt) used '$found', not the installed SDK in $sdk"
step "build examples/clip_op" cmake --build "$tmp/clip-build" -j 2
module="$tmp/clip-build/libdynrt_op_clip.so"
[[ -f "$module" ]] || fail "the example build did not produce $module"

# 3. A module folder of its own.
{ mkdir -p "$tmp/modules" && cp "$module" "$tmp/modules/"; } || fail "cannot copy $module"

# 4. The CLI loads it next to the in-tree modules.
echo "== dynrt ops --json"
"$cli" ops --json --modules-dir "$build_dir/lib/dynrt" --modules-dir "$tmp/modules" > "$tmp/ops.json" 2> "$tmp/ops.err" ||
    { cat "$tmp/ops.err" >&2; fail "dynrt ops --json exited with $?"; }
"$python" "$source_dir/tests/sdk/check_outputs.py" ops "$tmp/ops.json" "$tmp/modules" clip || fail "dynrt ops check"

# 5. The example pipeline, with its known input written here (the shipped
# clip_input.npy must be what make_input.py writes, so it cannot drift either).
mkdir -p "$tmp/pipeline"
cp "$source_dir/examples/clip_op/clip.yaml" "$tmp/pipeline/" || fail "cannot copy clip.yaml"
"$python" "$source_dir/examples/clip_op/make_input.py" "$tmp/pipeline/clip_input.npy" || fail "make_input.py"
cmp -s "$tmp/pipeline/clip_input.npy" "$source_dir/examples/clip_op/clip_input.npy" ||
    fail "examples/clip_op/clip_input.npy differs from what make_input.py writes: rerun make_input.py"
echo "== dynrt run clip.yaml"
"$cli" run "$tmp/pipeline/clip.yaml" --modules-dir "$build_dir/lib/dynrt" --modules-dir "$tmp/modules" \
    --save-outputs "$tmp/out" > "$tmp/run.log" 2>&1
rc=$?
[[ $rc -eq 0 ]] || { cat "$tmp/run.log" >&2; fail "dynrt run exited with $rc"; }
# Schedule of clip.yaml: n = 3, 17, 3, then the fed [1, 10] tensor; bounds [0, 1].
"$python" "$source_dir/tests/sdk/check_outputs.py" clip "$tmp/out" "$tmp/pipeline/clip_input.npy" 0 1 \
    1x3,1x17,1x3,1x10 || { cat "$tmp/run.log" >&2; fail "output check"; }

# 6. Without the module folder the op is unknown, and the error says so.
"$cli" run "$tmp/pipeline/clip.yaml" --modules-dir "$build_dir/lib/dynrt" > "$tmp/missing.log" 2>&1 &&
    fail "dynrt run succeeded without the module that defines clip"
grep -q "clip" "$tmp/missing.log" || { cat "$tmp/missing.log" >&2; fail "the unknown-op error does not name 'clip'"; }

# 7. The same module built with another fingerprint (_GLIBCXX_DEBUG changes the
# layout of std containers, and the fingerprint says so) is refused with the
# message docs/adding-an-op.md shows, and the other modules still load.
if grep -q '"fingerprint": "[^"]*libstdc++' "$tmp/ops.json"; then
    step "configure examples/clip_op with _GLIBCXX_DEBUG" configure_example "$tmp/clip-dbg" -D_GLIBCXX_DEBUG
    step "build examples/clip_op with _GLIBCXX_DEBUG" cmake --build "$tmp/clip-dbg" -j 2
    { mkdir -p "$tmp/modules-dbg" && cp "$tmp/clip-dbg/libdynrt_op_clip.so" "$tmp/modules-dbg/"; } ||
        fail "cannot copy the _GLIBCXX_DEBUG module"
    echo "== dynrt ops --json with a module of another fingerprint"
    "$cli" ops --json --modules-dir "$build_dir/lib/dynrt" --modules-dir "$tmp/modules-dbg" \
        > "$tmp/ops-dbg.json" 2> "$tmp/ops-dbg.err" || { cat "$tmp/ops-dbg.err" >&2; fail "dynrt ops exited with $?"; }
    "$python" "$source_dir/tests/sdk/check_outputs.py" refused "$tmp/ops-dbg.json" \
        "$tmp/modules-dbg/libdynrt_op_clip.so" clip || fail "fingerprint mismatch check"
else
    echo "== (not libstdc++: the _GLIBCXX_DEBUG fingerprint check does not apply)"
fi

echo "PASS: the example op built against the installed SDK loads and runs from YAML; the embedding example computes a model's reference outputs"
