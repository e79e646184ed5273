// reverse_sequence: reverses the first sequence_lens[b] elements along
// `time_axis` of every batch entry b along `batch_axis` (ONNX
// ReverseSequence); the elements past a sequence's length are copied as they
// are. The input has rank >= 2; the two axes are 0 and 1, in either order.
// Elements move bit for bit, so every data type is served.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "reverse_sequence_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "reverse_sequence";

struct Axes {
    size_t batch = 1, time = 0;
};

// The axes, checked: each 0 or 1, and not the same.
Axes read_axes(const Attributes& a, const std::string& node) {
    const int64_t batch = a.get_int("batch_axis"), time = a.get_int("time_axis");
    for (const auto& [name, v] : {std::pair<const char*, int64_t>{"batch_axis", batch}, {"time_axis", time}})
        if (v != 0 && v != 1)
            throw Error(std::string(name) + " is " + std::to_string(v) + "; it must be 0 or 1",
                        node_context(node, kOp, name));
    if (batch == time)
        throw Error("batch_axis and time_axis are both " + std::to_string(batch) + "; they must differ",
                    node_context(node, kOp, "time_axis"));
    return {static_cast<size_t>(batch), static_cast<size_t>(time)};
}

std::vector<Layout> infer_reverse_sequence(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    const Layout& lens = ctx.inputs.at(1);
    const Axes axes = read_axes(ctx.attrs, ctx.node);
    if (in.shape.rank() < 2)
        throw Error("input " + in.to_string() + " has rank " + std::to_string(in.shape.rank()) +
                        "; reverse_sequence needs rank >= 2 (batch and time axes)",
                    node_context(ctx.node, kOp, "input"));
    if (!is_index_type(lens.dtype) || lens.shape.rank() != 1)
        throw Error("sequence_lens (input 1) must be a 1-D i32 or i64 tensor, got " + lens.to_string(),
                    node_context(ctx.node, kOp, "sequence_lens"));
    if (!lens.shape[0].compatible(in.shape[axes.batch]))
        throw Error("sequence_lens " + lens.to_string() + " must have one length per batch entry of input " +
                        in.to_string() + " (batch_axis " + std::to_string(axes.batch) + ")",
                    node_context(ctx.node, kOp, "sequence_lens"));
    return {in};
}

// ---- reference ------------------------------------------------------------

// The error of a length outside [0, steps], the same on every device.
Error length_error(const std::string& node, int64_t len, size_t b, const Shape& input, size_t time) {
    return Error("sequence_lens[" + std::to_string(b) + "] is " + std::to_string(len) + ", outside [0, " +
                     std::to_string(input[time]) + "] (the time axis of input " + input.to_string() + ")",
                 node_context(node, kOp, "sequence_lens"));
}

void reverse_sequence_kernel(HostCall& call) {
    const Shape& s = call.in_shape(0);
    const Axes axes = read_axes(call.attrs(), call.node());
    const int64_t steps = s[axes.time];
    const std::vector<int64_t> lens = call.get_ints(1);
    // Every length checked before anything is written.
    for (size_t b = 0; b < lens.size(); ++b)
        if (lens[b] < 0 || lens[b] > steps) throw length_error(call.node(), lens[b], b, s, axes.time);
    const size_t count = s.count();
    if (count == 0) return;
    const std::vector<size_t> strides = strides_of(s);
    const size_t ts = strides[axes.time], bs = strides[axes.batch], width = byte_size(call.in_type(0));
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (size_t o = 0; o < count; ++o) {
        const size_t t = o / ts % static_cast<size_t>(steps), b = o / bs % static_cast<size_t>(s[axes.batch]);
        const auto len = static_cast<size_t>(lens[b]);
        const size_t from = t < len ? o - t * ts + (len - 1 - t) * ts : o;
        std::memcpy(dst + o * width, src + from * width, width);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

// The report of reverse_sequence_ref (reverse_sequence.cl): a bad length's
// batch entry + 1 (0: none) and its low and high 32 bits; raised as the host
// impls' error.
void check_report(const KernelParams& p, const std::vector<int32_t>& report) {
    if (report.at(0) == 0) return;
    const auto given = static_cast<int64_t>(uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1)));
    throw length_error(p.node, given, uint32_t(report[0]) - 1, p.inputs.at(0).get_shape(),
                       read_axes(*p.attrs, p.node).time);
}

OclKernelSpec reverse_sequence_ocl_spec() {
    OclKernelSpec spec;
    spec.source = reverse_sequence_cl;
    spec.kernel_name = "reverse_sequence_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const Axes axes = read_axes(*p.attrs, p.node);
        return JitDefines{{"BITS_T", ocl_bits_type(p.inputs.at(0).dtype)},
                          {"TIME_POS", std::to_string(kOclMaxRank - rank + axes.time)},
                          {"BATCH_POS", std::to_string(kOclMaxRank - rank + axes.batch)},
                          {"TIME_STRIDE", jit_dims_product("INPUT0", rank, axes.time + 1, rank)},
                          {"BATCH_STRIDE", jit_dims_product("INPUT0", rank, axes.batch + 1, rank)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    spec.report_ints = 3;
    spec.report_check = check_report;
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_reverse_sequence(ImportContext& c) {
    if (!c.only_attrs({"batch_axis", "time_axis"})) return false;
    c.set("batch_axis", c.i("batch_axis", 1));
    c.set("time_axis", c.i("time_axis", 0));
    c.use_inputs({0, 1});
    return true;
}

void register_reverse_sequence(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Reverses the first sequence_lens[b] steps along time_axis of each batch entry (ONNX ReverseSequence)", 2,
        2,
        {attr_int("batch_axis", 1, "the batch axis: 0 or 1"),
         attr_int("time_axis", 0, "the time axis reversed: 0 or 1, not batch_axis")},
        infer_reverse_sequence);
    def.imports = {onnx_rule("ReverseSequence", 2, 2, onnx_reverse_sequence, "`batch_axis`, `time_axis`")};
    reg.add_op(def);
    add_host_impls(reg, kOp, reverse_sequence_kernel,
                   host_options({}, [](const KernelParams& p) { return check_index_input(p, 1, "sequence_lens"); }));
    // OpenCL: a length out of range is reported by the kernel
    // (reverse_sequence.cl) and raised by check_report.
    add_ocl_impls(reg, kOp, reverse_sequence_ocl_spec(), ocl_options({}, [](const KernelParams& p) {
                      return check_index_input(p, 1, "sequence_lens", kOclMaxRank);
                  }));
}

}   // namespace

DYNRT_MODULE("reverse_sequence", register_reverse_sequence)
