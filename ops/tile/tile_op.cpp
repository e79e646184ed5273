// tile: the input repeated along each dim (ONNX Tile). Input 1 holds the
// repeats, one non-negative count per input dim (a 1-D i32/i64 tensor, read by
// value during shape inference); output dim i is input dim i * repeats[i], and
// out[c] = in[c mod in_dims]. Elements are copied bit for bit.
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "tile_cl.hpp"

namespace {

using namespace dynrt;

Error repeats_error(const ShapeInferContext& ctx, const std::string& message) {
    return Error(message, node_context(ctx.node, "tile", "repeats"));
}

// Dim `d` repeated `r` times: exact when `d` is static, scaled bounds otherwise.
Dimension repeat_dim(const ShapeInferContext& ctx, const Dimension& d, int64_t r, const std::string& what) {
    if (r == 0) return Dimension(0);
    if (r == 1) return d;
    const auto scaled = [&](int64_t v) {
        if (v > static_cast<int64_t>(kMaxElements / static_cast<uint64_t>(r)))
            throw repeats_error(ctx, what + " has more than 2^60 elements");
        return v * r;
    };
    if (d.is_static()) return Dimension(scaled(d.get_length()));
    if (d.max() == Dimension::kUnbounded) return Dimension(scaled(d.min()), Dimension::kUnbounded);
    return Dimension(scaled(d.min()), scaled(d.max()));
}

std::vector<Layout> infer_tile(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    const Layout& reps = ctx.inputs.at(1);
    const size_t rank = data.shape.rank();
    if (reps.dtype != DataType::i32 && reps.dtype != DataType::i64)
        throw repeats_error(ctx, "the repeats (input 1) must be i32 or i64, got " + reps.to_string());
    if (reps.shape.rank() != 1 || (reps.shape[0].is_static() && reps.shape[0].get_length() != int64_t(rank)))
        throw repeats_error(ctx, "the repeats (input 1) must be 1-D with one count per dim of the input " +
                                     data.shape.to_string() + ", got " + reps.to_string());
    const HostTensor* value = ctx.value(1);
    std::vector<Dimension> out(rank);
    if (value == nullptr) {   // unknown counts: only empty dims stay known
        for (size_t i = 0; i < rank; ++i)
            if (data.shape[i] == Dimension(0)) out[i] = Dimension(0);
        return {Layout(PartialShape(std::move(out)), data.dtype)};
    }
    const std::vector<int64_t> r = value->to_int64();
    const std::string what = "tiling " + data.shape.to_string() + " by " + ints_to_string(r);
    for (size_t i = 0; i < rank; ++i) {
        if (r[i] < 0) throw repeats_error(ctx, what + ": repeat " + std::to_string(r[i]) + " is negative");
        out[i] = repeat_dim(ctx, data.shape[i], r[i], what);
    }
    PartialShape shape(std::move(out));
    std::vector<int64_t> known;
    for (size_t i = 0; i < rank; ++i) known.push_back(shape[i].min());
    size_t count = 0;
    if (!count_fits(known, &count)) throw repeats_error(ctx, what + " has more than 2^60 elements");
    return {Layout(std::move(shape), data.dtype)};
}

// ---- reference ------------------------------------------------------------

void tile_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const Shape& out = call.out_shape(0);
    const size_t count = out.count(), rank = out.rank();
    if (count == 0) return;
    const size_t width = byte_size(call.out_type(0));
    const std::vector<size_t> in_strides = strides_of(in), out_strides = strides_of(out);
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    for (size_t o = 0; o < count; ++o) {
        size_t from = 0;
        for (size_t d = 0; d < rank; ++d) {
            const size_t c = o / out_strides[d] % static_cast<size_t>(out[d]);
            from += c % static_cast<size_t>(in[d]) * in_strides[d];
        }
        std::memcpy(dst + o * width, src + from * width, width);
    }
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

OclKernelSpec tile_ocl_spec() {
    OclKernelSpec spec;
    spec.source = tile_cl;
    spec.kernel_name = "tile_ref";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"BITS_T", ocl_bits_type(p.outputs.at(0).dtype)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

std::string rank_fits(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > kOclMaxRank)
        return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above " + std::to_string(kOclMaxRank);
    return {};
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_tile(ImportContext& c) {
    // Tile-1 took (input, tiles, axis): another signature.
    if (c.opset() < 6) return c.unsupported("Tile before opset 6 (tiles and axis inputs) is not mapped");
    if (!c.only_attrs({})) return false;
    c.use_inputs({0, 1});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Tile", 2, 3, onnx_tile, "repeats as input 1 (read by value); opset >= 6")};
}

void register_tile(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("tile", "The input repeated repeats[i] times along each dim i (input 1)", 2, 2, {}, infer_tile);
    def.value_inputs = {1};
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "tile", tile_kernel);   // every dtype, any rank
    add_ocl_impls(reg, "tile", tile_ocl_spec(), ocl_options({}, rank_fits));
}

}   // namespace

DYNRT_MODULE("tile", register_tile)
