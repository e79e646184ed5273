// pad: the input grown (or cropped) at both ends of some axes (ONNX Pad).
// pads = [b_0 .. b_n-1, e_0 .. e_n-1] for the n padded axes (every axis when
// no axes are given); output dim = dim + b + e. A negative amount crops. The
// new positions hold `mode`:
//   constant  the constant value (input 2, else the `value` attribute);
//   edge      the nearest edge element;
//   reflect   the input mirrored about its edge elements (not repeating them);
//   wrap      the input repeated.
// As in ONNX's reference, crops apply first and the modes read the cropped
// input. pads and axes come from inputs 1 and 3 (1-D i32/i64 tensors read by
// value during shape inference) or, where absent, the attributes.
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
#include "pad_cl.hpp"

namespace {

using namespace dynrt;

enum class PadMode { constant, reflect, edge, wrap };
const std::vector<std::string> kModes = {"constant", "reflect", "edge", "wrap"};
constexpr size_t kOclMaxRank = 8;

PadMode pad_mode(const Attributes& a) { return static_cast<PadMode>(mode_index("pad", kModes, a.get_string("mode"))); }

Error pad_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "pad", field));
}

// Begin and end amounts per dim of a rank-`rank` input (0 for dims not named).
struct DimPads {
    std::vector<int64_t> begin, end;
};

// pads and axes as given: input k when the node has it, else the attribute.
// nullopt while an input's values are unknown.
using ValuesOf = std::function<std::optional<std::vector<int64_t>>(size_t k)>;

std::optional<std::vector<int64_t>> field(const std::string& node, const Attributes& attrs, size_t inputs, size_t k,
                                          const char* name, const ValuesOf& values) {
    const std::vector<int64_t> attr = attrs.get_ints(name);
    if (k >= inputs) return attr;
    if (!attr.empty())
        throw pad_error(node, name,
                        std::string(name) + " given both as input " + std::to_string(k) + " and as the attribute " +
                            ints_to_string(attr));
    return values(k);
}

std::optional<DimPads> read_pads(const std::string& node, const Attributes& attrs, size_t inputs,
                                 const PartialShape& in, const ValuesOf& values) {
    const auto pads = field(node, attrs, inputs, 1, "pads", values);
    const auto axes = field(node, attrs, inputs, 3, "axes", values);
    if (!pads || !axes) return std::nullopt;
    const auto rank = static_cast<int64_t>(in.rank());
    std::vector<size_t> pos;
    if (axes->empty() && inputs < 4)
        for (size_t i = 0; i < in.rank(); ++i) pos.push_back(i);
    std::vector<bool> seen(in.rank(), false);
    for (int64_t a : *axes) {
        const int64_t p = a < 0 ? a + rank : a;
        if (p < 0 || p >= rank || seen[static_cast<size_t>(p)])
            throw pad_error(node, "axes",
                            "axes " + ints_to_string(*axes) + " name " + std::to_string(a) +
                                (p < 0 || p >= rank ? ", out of range" : " twice") + " for input " + in.to_string());
        seen[static_cast<size_t>(p)] = true;
        pos.push_back(static_cast<size_t>(p));
    }
    if (pads->size() != 2 * pos.size())
        throw pad_error(node, "pads",
                        "pads " + ints_to_string(*pads) + " has " + std::to_string(pads->size()) + " entries, " +
                            std::to_string(2 * pos.size()) + " expected for " + std::to_string(pos.size()) +
                            " padded axes of input " + in.to_string());
    DimPads d{std::vector<int64_t>(in.rank(), 0), std::vector<int64_t>(in.rank(), 0)};
    for (size_t i = 0; i < pos.size(); ++i) {
        d.begin[pos[i]] = (*pads)[i];
        d.end[pos[i]] = (*pads)[i + pos.size()];
    }
    return d;
}

// Output extent of a static dim; an error when negative, or when a mode that
// repeats input elements has none to repeat.
int64_t padded_dim(const std::string& node, PadMode mode, const PartialShape& in, size_t i, int64_t b, int64_t e) {
    const int64_t dim = in[i].get_length();
    const int64_t out = checked_add(checked_add(dim, b, "pad: output extent"), e, "pad: output extent");
    const std::string where = "dim " + std::to_string(i) + " of input " + in.to_string() + " padded by " +
                              std::to_string(b) + " and " + std::to_string(e);
    if (out < 0) throw pad_error(node, "pads", where + " has a negative extent");
    const int64_t kept = dim + std::min<int64_t>(b, 0) + std::min<int64_t>(e, 0);   // after the crops
    if (mode != PadMode::constant && out > 0 && kept <= 0)
        throw pad_error(node, "mode",
                        where + ": mode " + kModes[static_cast<size_t>(mode)] + " has no input element to repeat");
    return out;
}

std::vector<Layout> infer_pad(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const PadMode mode = pad_mode(ctx.attrs);
    for (size_t k : {size_t{1}, size_t{3}}) {
        if (k >= ctx.inputs.size()) continue;
        const Layout& l = ctx.inputs[k];
        if (!is_index_type(l.dtype) || l.shape.rank() != 1)
            throw pad_error(ctx.node, k == 1 ? "pads" : "axes",
                            std::string(k == 1 ? "pads" : "axes") + " (input " + std::to_string(k) +
                                ") must be a 1-D i32/i64 tensor, got " + l.to_string());
    }
    if (ctx.inputs.size() > 2) {
        const Layout& v = ctx.inputs[2];
        if (v.dtype != data.dtype || v.shape.rank() > 1 || (v.shape.is_static() && v.count() != 1))
            throw pad_error(ctx.node, "value",
                            "the constant value (input 2) must be one element of the data's type " +
                                std::string(to_string(data.dtype)) + ", got " + v.to_string());
    }
    const auto pads = read_pads(ctx.node, ctx.attrs, ctx.inputs.size(), data.shape, [&](size_t k) {
        const HostTensor* v = ctx.value(k);
        return v ? std::optional<std::vector<int64_t>>(v->to_int64()) : std::nullopt;
    });
    std::vector<Dimension> out;
    for (size_t i = 0; i < data.shape.rank(); ++i) {
        if (!pads) {
            out.push_back(Dimension());   // amounts unknown until their producer runs
        } else if (pads->begin[i] == 0 && pads->end[i] == 0) {
            out.push_back(data.shape[i]);
        } else {
            out.push_back(data.shape[i].is_static()
                              ? Dimension(padded_dim(ctx.node, mode, data.shape, i, pads->begin[i], pads->end[i]))
                              : Dimension());
        }
    }
    return {Layout(PartialShape(std::move(out)), data.dtype)};
}

// Input position of output coordinate `c` along a dim of extent `dim`, or -1
// for the constant. As ONNX's reference: crop first, then pad the cropped
// range [lo, lo + kept).
int64_t source_of(PadMode mode, int64_t c, int64_t dim, int64_t b, int64_t e) {
    const int64_t lo = std::max<int64_t>(-b, 0);
    const int64_t kept = dim - lo - std::max<int64_t>(-e, 0);
    int64_t x = c - std::max<int64_t>(b, 0);
    if (x >= 0 && x < kept) return lo + x;
    switch (mode) {
        case PadMode::constant: return -1;
        case PadMode::edge: x = std::clamp<int64_t>(x, 0, kept - 1); break;
        case PadMode::wrap: x = ((x % kept) + kept) % kept; break;
        case PadMode::reflect: {
            const int64_t period = 2 * (kept - 1);
            if (period == 0) {
                x = 0;
                break;
            }
            x = ((x % period) + period) % period;
            if (x >= kept) x = period - x;
            break;
        }
    }
    return lo + x;
}

// The constant's bytes in the data's type: input 2 when present, else the
// `value` attribute converted.
std::vector<unsigned char> constant_bytes(const Attributes& attrs, DataType t, const void* input) {
    std::vector<unsigned char> bytes(byte_size(t));
    if (input) {
        std::memcpy(bytes.data(), input, bytes.size());
    } else {
        HostTensor v(t, Shape{1});
        v.set_from_double(0, attrs.get_float("value"));
        std::memcpy(bytes.data(), v.data(), bytes.size());
    }
    return bytes;
}

void pad_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const Shape& out = call.out_shape(0);
    const PadMode mode = pad_mode(call.attrs());
    const auto pads = read_pads(call.node(), call.attrs(), call.num_inputs(), PartialShape(in),
                                [&](size_t k) { return std::optional<std::vector<int64_t>>(call.get_ints(k)); });
    const size_t count = out.count();
    if (count == 0) return;
    const size_t width = byte_size(call.in_type(0));
    checked_mul(count, width, "pad: bytes of the output");
    for (size_t i = 0; i < in.rank(); ++i)
        padded_dim(call.node(), mode, PartialShape(in), i, pads->begin[i], pads->end[i]);
    const std::vector<unsigned char> value =
        constant_bytes(call.attrs(), call.in_type(0), call.num_inputs() > 2 ? call.in_raw(2) : nullptr);
    const std::vector<size_t> pitch = strides_of(in);
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    std::vector<int64_t> coord(in.rank(), 0);
    for (size_t o = 0; o < count; ++o) {
        int64_t from = 0;
        for (size_t i = 0; i < in.rank() && from >= 0; ++i) {
            const int64_t x = source_of(mode, coord[i], in[i], pads->begin[i], pads->end[i]);
            from = x < 0 ? -1 : from + x * static_cast<int64_t>(pitch[i]);
        }
        std::memcpy(dst + o * width, from < 0 ? value.data() : src + static_cast<size_t>(from) * width, width);
        for (size_t i = in.rank(); i-- > 0;) {
            if (++coord[i] < out[i]) break;
            coord[i] = 0;
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

// Attribute values as JIT constants <NAME>0..<n-1>, the missing entries `fill`.
void jit_ints(JitDefines& d, const std::string& name, std::vector<int64_t> v, size_t n, int64_t fill) {
    v.resize(n, fill);
    for (size_t k = 0; k < n; ++k) d.emplace_back(name + std::to_string(k), std::to_string(v[k]) + "L");
}

OclKernelSpec pad_ocl_spec() {
    OclKernelSpec spec;
    spec.source = pad_cl;
    spec.kernel_name = "pad_ref";
    // The rank, mode and which fields are inputs are fixed per node; attribute
    // fields are constants, input fields are read by the kernel.
    spec.defines = [](const KernelParams& p, bool) {
        const Attributes& a = *p.attrs;
        const DataType t = p.inputs.at(0).dtype;
        const size_t inputs = p.inputs.size();
        std::vector<int64_t> axes = a.get_ints("axes");
        if (axes.empty() && inputs < 4)
            for (size_t k = 0; k < kOclMaxRank; ++k) axes.push_back(static_cast<int64_t>(k));
        const size_t n = inputs > 3 ? 0 : a.get_ints("pads").size() / 2;
        std::vector<unsigned char> bytes = constant_bytes(a, t, nullptr);
        uint64_t bits = 0;
        std::memcpy(&bits, bytes.data(), bytes.size());   // little-endian: the low bytes
        JitDefines d = {{"ELEM_T", ocl_bits_type(t)},
                        {"PAD_RANK", std::to_string(p.inputs.at(0).shape.rank())},
                        {"PAD_INPUTS", std::to_string(inputs)},
                        {"PAD_MODE", std::to_string(mode_index("pad", kModes, a.get_string("mode")))},
                        {"PAD_N", inputs > 3   ? "((int)INPUT3_LENGTH)"
                                  : inputs > 1 ? "((int)INPUT1_LENGTH / 2)"
                                               : std::to_string(n)},
                        {"ATTR_VALUE", "((ELEM_T)" + std::to_string(bits) + "UL)"}};
        jit_ints(d, "ATTR_PAD", a.get_ints("pads"), 2 * kOclMaxRank, 0);
        jit_ints(d, "ATTR_AXIS", axes, kOclMaxRank, 0);
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_1d(p.outputs.at(0).count(), limits);
    };
    return spec;
}

std::string ocl_check(const KernelParams& p) {
    std::string why = check_max_rank(p, kOclMaxRank);
    for (size_t k : {size_t{1}, size_t{3}})
        if (why.empty() && k < p.inputs.size()) why = check_index_input(p, k, "input " + std::to_string(k));
    return why;
}

// ---- ONNX -----------------------------------------------------------------

// Opset < 11: pads and value as attributes. 11+: pads and constant_value as
// inputs, 18+: axes as input 3. dynrt inputs are positional, so axes without
// a constant value map only when the axes are known (they become the attribute).
bool onnx_pad(ImportContext& c) {
    if (c.opset() < 11) {
        if (!c.only_attrs({"mode", "pads", "value"})) return false;
        c.set("mode", c.s("mode", "constant"));
        c.set("pads", c.ints("pads"));
        c.set("value", c.f("value", 0.0));
        c.use_inputs({0});
        return true;
    }
    if (!c.only_attrs({"mode"})) return false;
    c.set("mode", c.s("mode", "constant"));
    if (!c.present(2) && c.present(3)) {
        if (!c.value(3))
            return c.unsupported("Pad with axes (input 3) but no constant_value, and the axes are not constant");
        c.set("axes", c.value(3)->to_int64());
        c.use_inputs({0, 1});
        return true;
    }
    c.use_inputs({0, 1, 2, 3});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Pad", 1, 4, onnx_pad,
                      "`mode` (constant, reflect, edge, wrap); pads/value as attributes (opset < 11) or inputs; axes "
                      "as input 3 (opset 18; without constant_value only when constant)")};
}

void register_pad(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        "pad", "Grows or crops the input at both ends of axes (ONNX Pad; modes constant, reflect, edge, wrap)", 1, 4,
        {attr_string("mode", std::string("constant"), kModes, "what the new positions hold"),
         attr_ints("pads", std::vector<int64_t>{}, "begin amounts then end amounts per padded axis (input 1 absent)"),
         attr_float("value", 0.0, "the constant of mode constant (used when input 2 is absent)"),
         attr_ints("axes", std::vector<int64_t>{}, "padded axes; empty: every axis (used when input 3 is absent)")},
        infer_pad);
    def.value_inputs = {1, 3};
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "pad", pad_kernel);
    add_ocl_impls(reg, "pad", pad_ocl_spec(), ocl_options({}, ocl_check));
}

}   // namespace

DYNRT_MODULE("pad", register_pad)
