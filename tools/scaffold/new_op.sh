#!/usr/bin/env bash
# new_op.sh: creates the folder of a new in-tree op, ready to edit.
#
#   tools/scaffold/new_op.sh [--into DIR] NAME
#
# Writes DIR/NAME/ (DIR defaults to the ops/ folder of this source tree) with
#   CMakeLists.txt   dynrt_add_op(NAME NAME SOURCES ... KERNELS ... TESTS ...)
#   NAME_op.cpp      a working op: y = x * scale (attribute `scale`, default 1):
#                    definition, shape inference, reference impl, OpenCL impls
#   NAME.cl          the OpenCL kernel of the static and shape-agnostic impls
#   sweep.txt        the op's `dynrt test-op` sweep (run by ctest)
#   README.md        semantics and attribute table
#   test_NAME.cpp    the three parts of an op test on tests/support/op_test.hpp
#                    (shape table, every impl vs reference, changing shapes)
# The next build picks the folder up by itself. An existing folder is never
# touched. docs/adding-an-op.md walks through the generated files, and the
# ctest `scaffold_creates_buildable_op` compiles them on every test run.
set -euo pipefail

usage() {
    echo "usage: $0 [--into DIR] NAME" >&2
    echo "  NAME: lower-case letters, digits and '_', starting with a letter (e.g. my_op)" >&2
    echo "  --into DIR: create DIR/NAME instead of <source tree>/ops/NAME" >&2
}

script_dir="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
into="$(cd "$script_dir/../.." && pwd)/ops"
name=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --into)
            [[ $# -ge 2 ]] || { echo "error: --into needs a folder" >&2; usage; exit 2; }
            into="$2"; shift 2 ;;
        --into=*) into="${1#--into=}"; shift ;;
        -h|--help) usage; exit 0 ;;
        -*) echo "error: unknown option '$1'" >&2; usage; exit 2 ;;
        *)
            [[ -z "$name" ]] || { echo "error: more than one NAME ('$name', '$1')" >&2; usage; exit 2; }
            name="$1"; shift ;;
    esac
done

[[ -n "$name" ]] || { echo "error: no op NAME given" >&2; usage; exit 2; }
# The name is the folder, the registry key, the module file and a C++ identifier
# fragment all at once, so it must be valid as each of them.
if ! [[ "$name" =~ ^[a-z][a-z0-9_]*$ ]]; then
    echo "error: op name '$name' is not snake_case (lower-case letters, digits, '_', starting with a letter)" >&2
    exit 2
fi
[[ -d "$into" ]] || { echo "error: folder '$into' does not exist" >&2; exit 2; }
dest="$into/$name"
if [[ -e "$dest" ]]; then
    echo "error: '$dest' already exists; refusing to overwrite it (pick another name or remove the folder)" >&2
    exit 1
fi

# my_op -> MyOp, for gtest suite names.
camel=""
IFS=_ read -ra parts <<< "$name"
for p in "${parts[@]}"; do camel+="${p^}"; done

# Everything is written into a staging folder renamed at the end, so an
# interrupted run leaves no half-made op behind for the build to pick up.
stage="$(mktemp -d "$into/.${name}.new.XXXXXX")"
trap 'rm -rf "$stage"' EXIT

fill() {   # fill OUT: stdin with @NAME@ / @CAMEL@ replaced
    sed -e "s/@NAME@/$name/g" -e "s/@CAMEL@/$camel/g" > "$1"
}

fill "$stage/CMakeLists.txt" <<'EOF'
dynrt_add_op(NAME @NAME@ SOURCES @NAME@_op.cpp KERNELS @NAME@.cl TESTS test_@NAME@.cpp)
EOF

fill "$stage/@NAME@_op.cpp" <<'EOF'
// @NAME@: y = x * scale, elementwise (from tools/scaffold/new_op.sh: make it your op's own).
#include "@NAME@_cl.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"   // OpDefinition, HostCall, add_host_impls, DYNRT_MODULE

namespace {
using namespace dynrt;

// Shape inference: a pure function of the input layouts and attributes; throws naming the shapes.
std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    if (!is_floating(in.dtype)) throw Error("@NAME@ takes a floating-point input, got " + in.to_string());
    return {in};
}

// The reference impl: plain loops in double, the oracle of every other impl.
void reference(HostCall& call) {
    const double scale = call.attrs().get_float("scale");
    for (size_t i = 0; i < call.in_shape(0).count(); ++i) call.set(0, i, call.get(0, i) * scale);
}

// OpenCL: @NAME@.cl with SCALE and the element type as JIT constants, one work-item per element.
OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = @NAME@_cl;
    spec.kernel_name = "@NAME@_ref";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"SCALE", jit_float_literal(p.attrs->get_float("scale"))}, jit_data_f16(p.inputs[0].dtype)};
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    return spec;
}

void register_op(ModuleRegistrar& reg) {
    OpDefinition def;
    def.name = "@NAME@";
    def.attrs = {attr_float("scale", 1.0, "factor applied to every element")};
    def.infer = infer;
    reg.add_op(def);
    add_host_impls(reg, "@NAME@", reference);   // cpu_ref_static, cpu_ref_dynamic
    OclImplOptions ocl;
    ocl.dtypes = {DataType::f32, DataType::f16};
    add_ocl_impls(reg, "@NAME@", ocl_spec(), ocl);   // ocl_static, ocl_dynamic
}
}  // namespace

DYNRT_MODULE("@NAME@", register_op)
EOF

fill "$stage/@NAME@.cl" <<'EOF'
// @NAME@ on OpenCL: y = x * SCALE per element; ocl_common.cl's LOAD/STORE convert f16.
KERNEL(@NAME@_ref)(OPTIONAL_SHAPE_INFO_ARG __global const INPUT0_TYPE* input0, __global OUTPUT0_TYPE* output0) {
    const ulong i = get_global_id(0);
    if (i < (ulong)OUTPUT0_LENGTH) STORE(output0, i, LOAD(input0, i) * SCALE);
}
EOF

fill "$stage/sweep.txt" <<'EOF'
# @NAME@: `dynrt test-op @NAME@` cases (docs/test-op.md): tail sizes.
attrs scale=0.5
[r,c] r=1,3 c=1,13,16,17,255,257
EOF

fill "$stage/README.md" <<'EOF'
# @NAME@

`y = x * scale`, elementwise, on a floating-point `x` of any shape (generated by
`tools/scaffold/new_op.sh`: describe the real semantics here).

| attribute | type | default | meaning |
|---|---|---|---|
| `scale` | float | 1.0 | factor applied to every element |
EOF

fill "$stage/test_@NAME@.cpp" <<'EOF'
// @NAME@: the three parts of an op test (tests/support/op_test.hpp).
#include "op_test.hpp"

namespace dynrt {
namespace {

const Attributes kHalf = test::attrs({{"scale", 0.5}});

TEST(@CAMEL@Shape, OutputIsTheInputAndIntegersAreRejected) {
    const Layout dyn({Dimension(), 4}, DataType::f16), i32({3}, DataType::i32);
    test::expect_shapes("@NAME@", {{{dyn}, kHalf, {dyn}}, {{i32}, kHalf, {}, {"floating", "i32[3]"}}});
}

TEST(@CAMEL@Impls, EveryImplMatchesTheReference) {
    for (DataType t : {DataType::f32, DataType::f16})
        test::expect_impls_match_reference({"@NAME@", kHalf, {Layout({Dimension(), 3}, t)}, {}},
                                           test::random_runs(t, {{{1, 3}}, {{17, 3}}, {{257, 3}}}));
}

TEST(@CAMEL@Dynamic, OneInstanceFollowsChangingShapesOnEveryEngine) {
    std::vector<std::vector<Shape>> shapes;
    for (int64_t n : test::tail_sizes()) shapes.push_back({Shape{n, 3}});
    for (const char* engine : {"cpu", "ocl"})
        for (test::Mode mode : {test::Mode::dynamic_async, test::Mode::static_only})
            test::expect_sequence({"@NAME@", kHalf, {Layout({Dimension(), 3}, DataType::f32)}, {}},
                                  test::random_runs(DataType::f32, shapes), {engine, mode});
}

}  // namespace
}  // namespace dynrt
EOF

# Module file names come from the folder name; rename the staged files.
mv "$stage/@NAME@_op.cpp" "$stage/${name}_op.cpp"
mv "$stage/@NAME@.cl" "$stage/${name}.cl"
mv "$stage/test_@NAME@.cpp" "$stage/test_${name}.cpp"
chmod 755 "$stage"
mv -T "$stage" "$dest"
trap - EXIT

echo "created $dest:"
for f in CMakeLists.txt "${name}_op.cpp" "${name}.cl" sweep.txt README.md "test_${name}.cpp"; do echo "  $dest/$f"; done
echo "next: edit the files, then reconfigure and build (docs/adding-an-op.md):"
echo "  cmake --build <build dir> --target dynrt_op_${name} test_op_${name} && <build dir>/bin/test_op_${name}"
