// slice: a strided box of the input (ONNX Slice). For each sliced axis a, the
// output takes input positions start, start + step, ... short of end; the
// other dims are kept whole.
//
// starts, ends, axes and steps come from inputs 1-4 (1-D i32/i64 tensors read
// by value during shape inference) or, where an input is absent, from the
// attributes of the same names. Start and end follow ONNX: a negative value
// counts from the end of the axis, then both are clamped (to [0, dim] for a
// positive step, start to [0, dim-1] and end to [-1, dim-1] for a negative
// one), so INT_MAX / INT_MIN mean "to the end". A step of 0 is an error.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "slice_cl.hpp"

namespace {

using namespace dynrt;

constexpr size_t kOclMaxRank = 8;                                    // dims the shape info and JIT constants hold
const char* const kFields[] = {"starts", "ends", "axes", "steps"};   // inputs 1-4, in order

Error slice_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "slice", field));
}

// starts, ends, axes and steps as given (axes and steps defaulted), not yet
// checked against the input's rank.
struct SliceArgs {
    std::vector<int64_t> starts, ends, axes, steps;
};

// One field: input `k` (1-4) when the node has it, else the attribute. nullopt
// when the input's values are not known yet.
using ValuesOf = std::function<std::optional<std::vector<int64_t>>(size_t k)>;

std::optional<SliceArgs> read_args(const std::string& node, const Attributes& attrs, size_t inputs,
                                   const ValuesOf& values) {
    std::vector<int64_t> f[4];
    bool known = true;
    for (size_t i = 0; i < 4; ++i) {
        const std::vector<int64_t> attr = attrs.get_ints(kFields[i]);
        if (i + 1 >= inputs) {
            f[i] = attr;
            continue;
        }
        if (!attr.empty())
            throw slice_error(node, kFields[i],
                              std::string(kFields[i]) + " given both as input " + std::to_string(i + 1) +
                                  " and as the attribute " + ints_to_string(attr));
        const auto v = values(i + 1);
        known = known && v.has_value();
        if (v) f[i] = *v;
    }
    if (!known) return std::nullopt;
    SliceArgs a{f[0], f[1], f[2], f[3]};
    const size_t n = a.starts.size();
    if (a.axes.empty() && inputs < 4)
        for (size_t i = 0; i < n; ++i) a.axes.push_back(static_cast<int64_t>(i));
    if (a.steps.empty() && inputs < 5) a.steps.assign(n, 1);
    for (const auto* v : {&a.ends, &a.axes, &a.steps})
        if (v->size() != n) {
            const char* field = v == &a.ends ? "ends" : v == &a.axes ? "axes" : "steps";
            throw slice_error(node, field,
                              std::string(field) + " " + ints_to_string(*v) + " has " + std::to_string(v->size()) +
                                  " entries, starts " + ints_to_string(a.starts) + " has " + std::to_string(n));
        }
    for (int64_t s : a.steps)
        if (s == 0) throw slice_error(node, "steps", "steps " + ints_to_string(a.steps) + " has a step of 0");
    return a;
}

// The axes as positions of a rank-`rank` input: in range, each named once.
std::vector<size_t> axis_positions(const std::string& node, const SliceArgs& a, const PartialShape& in) {
    const auto rank = static_cast<int64_t>(in.rank());
    std::vector<size_t> out;
    std::vector<bool> seen(in.rank(), false);
    for (int64_t axis : a.axes) {
        const int64_t p = axis < 0 ? axis + rank : axis;
        if (p < 0 || p >= rank)
            throw slice_error(node, "axes",
                              "axis " + std::to_string(axis) + " of axes " + ints_to_string(a.axes) +
                                  " is out of range for input " + in.to_string());
        if (seen[static_cast<size_t>(p)])
            throw slice_error(node, "axes",
                              "axes " + ints_to_string(a.axes) + " name dim " + std::to_string(p) + " twice");
        seen[static_cast<size_t>(p)] = true;
        out.push_back(static_cast<size_t>(p));
    }
    return out;
}

// One axis of a static extent `dim`: the first position read, the step and
// the number of positions.
struct AxisSlice {
    int64_t start = 0, step = 1, len = 0;
};

AxisSlice slice_axis(int64_t dim, int64_t start, int64_t end, int64_t step) {
    // Negative values count from the end; the sums cannot overflow since dim >= 0.
    if (start < 0) start += dim;
    if (end < 0) end += dim;
    AxisSlice s;
    s.step = step;
    if (step > 0) {
        s.start = std::clamp<int64_t>(start, 0, dim);
        end = std::clamp<int64_t>(end, 0, dim);
        const auto stride = static_cast<uint64_t>(step);
        s.len = end > s.start ? static_cast<int64_t>((static_cast<uint64_t>(end - s.start) + stride - 1) / stride) : 0;
    } else {
        s.start = std::clamp<int64_t>(start, -1, dim - 1);
        end = std::clamp<int64_t>(end, -1, dim - 1);
        const uint64_t stride = static_cast<uint64_t>(-(step + 1)) + 1;   // |step| without overflow
        s.len = s.start > end ? static_cast<int64_t>((static_cast<uint64_t>(s.start - end) + stride - 1) / stride) : 0;
    }
    return s;
}

// The slice of every dim of a static input shape.
std::vector<AxisSlice> slice_dims(const std::string& node, const SliceArgs& a, const Shape& in) {
    std::vector<AxisSlice> out;
    for (int64_t d : in) out.push_back({0, 1, d});
    const std::vector<size_t> pos = axis_positions(node, a, PartialShape(in));
    for (size_t i = 0; i < pos.size(); ++i) out[pos[i]] = slice_axis(in[pos[i]], a.starts[i], a.ends[i], a.steps[i]);
    return out;
}

void check_index_input(const std::string& node, const Layout& l, size_t k) {
    const char* field = kFields[k - 1];
    if (!is_index_type(l.dtype) || l.shape.rank() != 1)
        throw slice_error(node, field,
                          std::string(field) + " (input " + std::to_string(k) + ") must be a 1-D i32/i64 tensor, got " +
                              l.to_string());
}

std::vector<Layout> infer_slice(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    if (ctx.inputs.size() == 2) throw slice_error(ctx.node, "ends", "starts (input 1) given without ends (input 2)");
    if (ctx.inputs.size() > 5)
        throw slice_error(
            ctx.node, "inputs",
            "slice takes at most 5 inputs (data, starts, ends, axes, steps), got " + std::to_string(ctx.inputs.size()));
    for (size_t k = 1; k < ctx.inputs.size(); ++k) check_index_input(ctx.node, ctx.inputs[k], k);
    const auto args = read_args(ctx.node, ctx.attrs, ctx.inputs.size(), [&](size_t k) {
        const HostTensor* v = ctx.value(k);
        return v ? std::optional<std::vector<int64_t>>(v->to_int64()) : std::nullopt;
    });
    const PartialShape& in = data.shape;
    std::vector<Dimension> out(in.begin(), in.end());
    // A sliced dim of unknown extent (or unknown slice) holds at most the input's extent.
    const auto at_most = [](const Dimension& d) { return Dimension(0, d.max()); };
    if (!args) {
        // Values unknown until their producers run: only the rank is known.
        for (Dimension& d : out) d = at_most(d);
        return {Layout(PartialShape(std::move(out)), data.dtype)};
    }
    const std::vector<size_t> pos = axis_positions(ctx.node, *args, in);
    for (size_t i = 0; i < pos.size(); ++i) {
        const Dimension& d = in[pos[i]];
        out[pos[i]] = d.is_static()
                          ? Dimension(slice_axis(d.get_length(), args->starts[i], args->ends[i], args->steps[i]).len)
                          : at_most(d);
    }
    return {Layout(PartialShape(std::move(out)), data.dtype)};
}

std::vector<AxisSlice> call_slices(HostCall& call) {
    const auto args = read_args(call.node(), call.attrs(), call.num_inputs(),
                                [&](size_t k) { return std::optional<std::vector<int64_t>>(call.get_ints(k)); });
    return slice_dims(call.node(), *args, call.in_shape(0));
}

void slice_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const std::vector<AxisSlice> dims = call_slices(call);
    const size_t rank = in.rank();
    const size_t count = call.out_shape(0).count();
    if (count == 0) return;
    const size_t width = byte_size(call.in_type(0));
    checked_mul(count, width, "slice: bytes of the output");
    const std::vector<size_t> pitch = strides_of(in);
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    // Odometer over the output coordinates, innermost first; `from` is the
    // input offset of the current output element.
    std::vector<int64_t> coord(rank, 0);
    int64_t from = 0;
    for (size_t i = 0; i < rank; ++i) from += dims[i].start * static_cast<int64_t>(pitch[i]);
    for (size_t o = 0; o < count; ++o) {
        std::memcpy(dst + o * width, src + static_cast<size_t>(from) * width, width);
        for (size_t i = rank; i-- > 0;) {
            const int64_t step = dims[i].step * static_cast<int64_t>(pitch[i]);
            if (++coord[i] < dims[i].len) {
                from += step;
                break;
            }
            from -= (coord[i] - 1) * step;
            coord[i] = 0;
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

// Attribute values as JIT constants <NAME>0..7 (entry k of the field), the
// missing entries `fill`.
void jit_attr_field(JitDefines& d, const std::string& name, std::vector<int64_t> v, int64_t fill) {
    v.resize(kOclMaxRank, fill);
    for (size_t k = 0; k < kOclMaxRank; ++k) {
        // INT64_MIN has no literal of its own in C.
        const std::string lit = v[k] == INT64_MIN ? "(-9223372036854775807L - 1)" : std::to_string(v[k]) + "L";
        d.emplace_back(name + std::to_string(k), lit);
    }
}

OclKernelSpec slice_ocl_spec() {
    OclKernelSpec spec;
    spec.source = slice_cl;
    spec.kernel_name = "slice_ref";
    // The rank and which fields are inputs are fixed per node; the attribute
    // fields are constants. Values of input fields are read by the kernel.
    spec.defines = [](const KernelParams& p, bool) {
        const size_t inputs = p.inputs.size();
        const Attributes& a = *p.attrs;
        std::vector<int64_t> axes = a.get_ints("axes");
        const size_t n = inputs > 1 ? kOclMaxRank : a.get_ints("starts").size();
        if (axes.empty())
            for (size_t k = 0; k < kOclMaxRank; ++k) axes.push_back(static_cast<int64_t>(k));
        JitDefines d = {{"COPY_ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)},
                        {"SLICE_RANK", std::to_string(p.inputs.at(0).shape.rank())},
                        {"SLICE_INPUTS", std::to_string(inputs)},
                        {"SLICE_N", inputs > 1 ? "((int)INPUT1_LENGTH)" : std::to_string(n)}};
        jit_attr_field(d, "ATTR_START", a.get_ints("starts"), 0);
        jit_attr_field(d, "ATTR_AXIS", axes, 0);
        jit_attr_field(d, "ATTR_STEP", a.get_ints("steps"), 1);
        return d;
    };
    // Grid-stride over the output's 4-element vectors (the last one partial).
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_grid_stride((p.outputs.at(0).count() + 3) / 4, limits);
    };
    return spec;
}

std::string ocl_check(const KernelParams& p) {
    std::string why = check_max_rank(p, kOclMaxRank);
    for (size_t k = 1; why.empty() && k < p.inputs.size(); ++k) why = check_index_input(p, k, kFields[k - 1]);
    return why;
}

// ---- ONNX -----------------------------------------------------------------

// Opset 10+: starts, ends, axes, steps as inputs 1-4. dynrt inputs are
// positional, so steps without axes map only when the steps are known (they
// then become the attribute).
bool onnx_slice(ImportContext& c) {
    if (c.opset() < 10) {
        if (!c.only_attrs({"starts", "ends", "axes"})) return false;
        if (!c.has("starts") || !c.has("ends")) return c.unsupported("Slice-1 without `starts` and `ends`");
        for (const char* f : {"starts", "ends", "axes"})
            if (c.has(f)) c.set(f, c.ints(f));
        c.use_inputs({0});
        return true;
    }
    if (!c.only_attrs({})) return false;
    if (!c.present(3) && c.present(4)) {
        if (!c.value(4)) return c.unsupported("Slice with steps (input 4) but no axes, and the steps are not constant");
        c.set("steps", c.value(4)->to_int64());
        c.use_inputs({0, 1, 2});
        return true;
    }
    c.use_inputs({0, 1, 2, 3, 4});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Slice", 1, 5, onnx_slice,
                      "starts, ends, axes, steps as inputs (opset >= 10) or attributes (opset < 10); steps "
                      "without axes only when constant")};
}

void register_slice(ModuleRegistrar& reg) {
    const char* where = " (used when input ";
    OpDefinition def = op_def(
        "slice", "A strided box of the input (ONNX Slice; starts/ends/axes/steps as inputs 1-4 or attributes)", 1, 5,
        {attr_ints("starts", std::vector<int64_t>{}, std::string("first position per axis") + where + "1 is absent)"),
         attr_ints("ends", std::vector<int64_t>{},
                   std::string("end position per axis (exclusive)") + where + "2 is absent)"),
         attr_ints("axes", std::vector<int64_t>{}, std::string("sliced axes; empty: 0..n-1") + where + "3 is absent)"),
         attr_ints("steps", std::vector<int64_t>{},
                   std::string("step per axis, not 0; empty: 1") + where + "4 is absent)")},
        infer_slice);
    def.value_inputs = {1, 2, 3, 4};
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "slice", slice_kernel);
    add_ocl_impls(reg, "slice", slice_ocl_spec(), ocl_options({}, ocl_check));
}

}   // namespace

DYNRT_MODULE("slice", register_slice)
