// where: y = condition ? x : y elementwise (ONNX Where), the three inputs
// broadcast together as numpy does. `condition` is boolean (any non-zero
// byte reads as true); `x` and `y` share one data type, any of them, and the
// output has it. Elements are copied bit for bit (NaN payloads, -0 kept).
//
// The optimised impl (cpu_opt_*) splits the output into rows over the longest
// run of trailing dims along which each input either follows the output
// element by element or holds one value (dynrt/cpu_broadcast_rows.hpp); each
// row is a branch-free select loop (vectorised, 1/2/4/8-byte elements as
// unsigned integers). Same shapes are one row; a broadcast that leaves rows shorter than kMinRow elements
// goes to the reference.
#include <algorithm>
#include <array>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_broadcast_rows.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/cpu_vec_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "where_cl.hpp"

namespace {

using namespace dynrt;

const char* const kNames[] = {"condition", "x", "y"};

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, "where", field));
}

std::string shapes_of(const ShapeInferContext& ctx) {
    std::string s;
    for (size_t i = 0; i < 3; ++i) s += std::string(i ? ", " : "") + kNames[i] + " " + ctx.inputs[i].shape.to_string();
    return s;
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    if (ctx.inputs.size() != 3)
        throw node_error(ctx, "inputs",
                         "where takes 3 inputs (condition, x, y), got " + std::to_string(ctx.inputs.size()));
    const Layout& c = ctx.inputs[0];
    const Layout& x = ctx.inputs[1];
    const Layout& y = ctx.inputs[2];
    if (c.dtype != DataType::boolean)
        throw node_error(ctx, "inputs", "input 0 (condition) is " + c.to_string() + "; it must be boolean");
    if (x.dtype != y.dtype)
        throw node_error(ctx, "inputs",
                         "inputs x and y must have one data type, got x " + x.to_string() + " and y " + y.to_string());
    const PartialShape out =
        broadcast_inputs({c.shape, x.shape, y.shape}, shapes_of(ctx), node_context(ctx.node, "where", "inputs"));
    return {Layout(out, x.dtype)};
}

// ---- reference ------------------------------------------------------------

void reference(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const size_t bytes = byte_size(call.out_type(0));
    const auto* c = call.in<uint8_t>(0);
    const auto* x = static_cast<const unsigned char*>(call.in_raw(1));
    const auto* y = static_cast<const unsigned char*>(call.in_raw(2));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    BroadcastIndex ix(out, {call.in_shape(0), call.in_shape(1), call.in_shape(2)});
    for (size_t o = 0; o < out.count(); ++o, ix.next()) {
        const unsigned char* src = c[ix.in(0)] != 0 ? x + ix.in(1) * bytes : y + ix.in(2) * bytes;
        std::memcpy(dst + o * bytes, src, bytes);
    }
}

// ---- cpu: vectorised select over the engine's threads ---------------------

// Rows shorter than this cost more in per-row work than the select saves.
constexpr size_t kMinRow = 16;
constexpr size_t kGrainElements = 16384;   // elements below which a thread's chunk is not worth it

// d[i] = c[i] ? x[i] : y[i] as a mask blend, x and y each a row or one value.
template <class T, bool XOne, bool YOne>
[[gnu::always_inline]] inline void blend(const uint8_t* c, const T* x, const T* y, T* d, size_t n) {
    for (size_t i = 0; i < n; ++i) {
        const T m = static_cast<T>(T{0} - static_cast<T>(c[i] != 0));
        d[i] = static_cast<T>(((XOne ? x[0] : x[i]) & m) | ((YOne ? y[0] : y[i]) & static_cast<T>(~m)));
    }
}

template <class T>
[[gnu::always_inline]] inline void select_row(const uint8_t* c, bool c_one, const void* xv, bool x_one, const void* yv,
                                              bool y_one, void* dv, size_t n) {
    const T* x = static_cast<const T*>(xv);
    const T* y = static_cast<const T*>(yv);
    T* d = static_cast<T*>(dv);
    if (c_one) {
        const T* src = c[0] != 0 ? x : y;
        if (c[0] != 0 ? x_one : y_one) std::fill(d, d + n, src[0]);
        else std::memcpy(d, src, n * sizeof(T));
    } else if (!x_one && !y_one) {
        blend<T, false, false>(c, x, y, d, n);
    } else if (!y_one) {
        blend<T, true, false>(c, x, y, d, n);
    } else if (!x_one) {
        blend<T, false, true>(c, x, y, d, n);
    } else {
        blend<T, true, true>(c, x, y, d, n);
    }
}

// One row of elements of `width` bytes (1, 2, 4 or 8), built for each instruction set.
DYNRT_CPU_CLONES void select_row_of(size_t width, const uint8_t* c, bool c_one, const void* x, bool x_one,
                                    const void* y, bool y_one, void* d, size_t n) {
    switch (width) {
        case 1: return select_row<uint8_t>(c, c_one, x, x_one, y, y_one, d, n);
        case 2: return select_row<uint16_t>(c, c_one, x, x_one, y, y_one, d, n);
        case 4: return select_row<uint32_t>(c, c_one, x, x_one, y, y_one, d, n);
        default: return select_row<uint64_t>(c, c_one, x, x_one, y, y_one, d, n);
    }
}

void fast_kernel(HostCall& call) {
    const Shape& out = call.out_shape(0);
    const size_t count = out.count();
    if (count == 0) return;
    const BroadcastRows rows = plan_broadcast_rows(out, {&call.in_shape(0), &call.in_shape(1), &call.in_shape(2)});
    const size_t width = byte_size(call.out_type(0));
    const auto* c = call.in<uint8_t>(0);
    const auto* x = static_cast<const unsigned char*>(call.in_raw(1));
    const auto* y = static_cast<const unsigned char*>(call.in_raw(2));
    auto* d = static_cast<unsigned char*>(call.out_raw(0));
    const CpuThreads threads(call.params().engine, checked_mul(count, 3 * width + 1, "where: bytes moved"));
    // Work items are pieces of rows: a long row (same shapes: the whole
    // tensor is one) is spread over the threads too.
    const size_t piece = std::min(rows.inner, kGrainElements);
    const size_t pieces = (rows.inner + piece - 1) / piece;
    const size_t items = checked_mul(count / rows.inner, pieces, "where: row pieces");
    parallel_for(threads, items, std::max<size_t>(1, kGrainElements / piece), [&](size_t begin, size_t end) {
        for (size_t item = begin; item < end; ++item) {
            const size_t r = item / pieces, from = item % pieces * piece;
            std::array<size_t, 3> at{};   // element offsets of the piece in each input
            broadcast_row_offsets(rows, r, at.data());
            for (size_t k = 0; k < 3; ++k) at[k] += rows.one[k] ? 0 : from;
            select_row_of(width, c + at[0], rows.one[0], x + at[1] * width, rows.one[1], y + at[2] * width, rows.one[2],
                          d + (r * rows.inner + from) * width, std::min(piece, rows.inner - from));
        }
    });
}

// Any broadcast runs correctly; one whose rows are short runs faster on the reference.
std::string fast_supported(const KernelParams& p) {
    if (!p.outputs.at(0).shape.is_static()) return {};
    const Shape out = p.outputs[0].get_shape();
    const std::array<Shape, 3> in{p.inputs.at(0).get_shape(), p.inputs.at(1).get_shape(), p.inputs.at(2).get_shape()};
    const BroadcastRows rows = plan_broadcast_rows(out, {&in[0], &in[1], &in[2]});
    if (rows.inner < kMinRow && rows.inner < out.count())
        return "the broadcast of " + in[0].to_string() + ", " + in[1].to_string() + ", " + in[2].to_string() +
               " leaves rows of " + std::to_string(rows.inner) + " elements (the select loop takes rows of at least " +
               std::to_string(kMinRow) + ")";
    return {};
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = where_cl;
    spec.kernel_name = "where_ref";
    // Elements move as unsigned integers of their width, whatever the type.
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"BITS_T", ocl_bits_type(p.outputs[0].dtype)}};
    };
    spec.dispatch = [](const KernelParams& p, const auto& l) { return dispatch_1d(p.outputs[0].count(), l); };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
std::vector<ImportRule> onnx_rules() { return {onnx_rule("Where", 3, 3, import_plain(), "")}; }

void register_where(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("where", "Elementwise condition ? x : y with numpy broadcasting of the three inputs", 3, 3, {}, infer);
    def.imports = onnx_rules();
    reg.add_op(def);
    // Input 0 is the boolean condition, output 0 has x's type: every type on both.
    const std::vector<DataType> types = {DataType::f32, DataType::f16, DataType::i32,    DataType::i64,
                                         DataType::u8,  DataType::i8,  DataType::boolean};
    add_host_impls(reg, "where", reference, host_options(types));   // cpu_ref_dynamic, cpu_ref_static
    add_host_impls(reg, "where", fast_kernel, optimised_host_options(types, fast_supported));
    add_ocl_impls(reg, "where", ocl_spec(), ocl_options(types, validate_broadcast_rank));   // ocl_dynamic, ocl_static
}

}   // namespace

DYNRT_MODULE("where", register_where)
