// eye_like: a matrix of the input's shape with ones on the k-th diagonal and
// zeros elsewhere (ONNX EyeLike): out[i, j] = 1 when j - i == k. Only the
// input's shape is read, never its data. The output type is `dtype`, or the
// input's when `dtype` is empty.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "eye_like_cl.hpp"

namespace {

using namespace dynrt;

const std::vector<std::string> kTypes = {"", "f32", "f16", "f64", "i32", "i64", "u8", "i8", "boolean"};

DataType output_type(const Attributes& a, DataType in) {
    const std::string t = a.get_string("dtype");
    return t.empty() ? in : parse_data_type(t);
}

std::vector<Layout> infer_eye_like(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    if (in.shape.rank() != 2)
        throw Error(
            "input " + in.to_string() + " has rank " + std::to_string(in.shape.rank()) + "; eye_like takes a 2-D input",
            node_context(ctx.node, "eye_like", "inputs"));
    return {Layout(in.shape, output_type(ctx.attrs, in.dtype))};
}

// ---- reference ------------------------------------------------------------

void eye_like_kernel(HostCall& call) {
    const Shape& s = call.out_shape(0);
    const int64_t k = call.attrs().get_int("k");
    const size_t count = s.count();
    if (count == 0) return;
    const auto cols = static_cast<size_t>(s[1]);
    for (size_t o = 0; o < count; ++o) {
        // j - i lies in [-(rows-1), cols-1]: compared with any int64 k, no overflow.
        const int64_t i = static_cast<int64_t>(o / cols), j = static_cast<int64_t>(o % cols);
        call.set(0, o, j - i == k ? 1.0 : 0.0);
    }
}

// ---- OpenCL ---------------------------------------------------------------

// The bits of 1 stored as `t`, as an OpenCL literal of the element width.
std::string one_bits(DataType t) {
    HostTensor one(t, Shape{});
    one.set_from_double(0, 1.0);
    uint64_t bits = 0;
    std::memcpy(&bits, one.data(), byte_size(t));
    return std::to_string(bits) + "UL";
}

// `v` as an OpenCL long literal (the most negative one written as a difference,
// its magnitude being no long).
std::string long_literal(int64_t v) {
    return v < 0 ? "(" + std::to_string(v + 1) + "L - 1L)" : "(" + std::to_string(v) + "L)";
}

OclKernelSpec eye_like_ocl_spec() {
    OclKernelSpec spec;
    spec.source = eye_like_cl;
    spec.kernel_name = "eye_like_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const DataType t = p.outputs.at(0).dtype;
        return JitDefines{
            {"BITS_T", ocl_bits_type(t)}, {"ONE_BITS", one_bits(t)}, {"DIAGONAL", long_literal(p.attrs->get_int("k"))}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// ONNX TensorProto data types dynrt has, by their number.
const char* onnx_type_name(int64_t t) {
    switch (t) {
        case 1: return "f32";
        case 2: return "u8";
        case 3: return "i8";
        case 6: return "i32";
        case 7: return "i64";
        case 9: return "boolean";
        case 10: return "f16";
        case 11: return "f64";
        default: return nullptr;
    }
}

bool onnx_eye_like(ImportContext& c) {
    if (!c.only_attrs({"dtype", "k"})) return false;
    if (c.has("dtype")) {
        const char* t = onnx_type_name(c.i("dtype", 1));
        if (t == nullptr)
            return c.unsupported("EyeLike's dtype " + std::to_string(c.i("dtype", 1)) + " is a type dynrt lacks");
        c.set("dtype", std::string(t));
    }
    c.set("k", c.i("k", 0));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("EyeLike", 1, 1, onnx_eye_like, "`k`; `dtype` (a TensorProto type) -> `dtype`")};
}

void register_eye_like(ModuleRegistrar& reg) {
    OpDefinition def = op_def("eye_like", "Ones on the k-th diagonal (j - i == k) of the input's 2-D shape", 1, 1,
                              {attr_int("k", 0, "the diagonal: 0 the main one, > 0 above, < 0 below"),
                               attr_string("dtype", std::string(), kTypes, "the output's type; empty: the input's")},
                              infer_eye_like);
    def.imports = onnx_rules();
    reg.add_op(def);
    // Input 0 and output 0 may differ in type: no dtype filter.
    add_host_impls(reg, "eye_like", eye_like_kernel);
    add_ocl_impls(reg, "eye_like", eye_like_ocl_spec());
}

}   // namespace

DYNRT_MODULE("eye_like", register_eye_like)
