// sdpa on OpenCL (ocl_dynamic, ocl_static; f32, f16): sdpa.cl's
// flash-attention kernel, one work-group of kGroup work-items per (batch,
// query head, block of kBlockRows query rows).
//
// The local buffer follows the runtime head sizes (a kernel argument sized
// on every shape change): kBlockRows query rows, a tile of `bc` keys' k and v
// rows, the block's scores and sums. `bc` is kTileKeys, halved while the
// buffer would not fit the device's local memory (a GPU's 48 KiB hold D = Dv
// = 64 with 32 keys, D = Dv = 128 with 16).
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"
#include "sdpa_call.hpp"
#include "sdpa_cl.hpp"
#include "sdpa_impls.hpp"

namespace sdpa {

namespace {

using namespace dynrt;

constexpr size_t kBlockRows = 16;   // BR
constexpr size_t kTileKeys = 32;    // bc at most
constexpr size_t kGroup = 64;       // work-items per group (one local size: PoCL compiles one per size)

// Floats of the kernel's local buffer (sdpa.cl: qs, ks, vs, ss, acc and
// three per-row values).
size_t local_floats(size_t d, size_t dv, size_t bc) { return kBlockRows * (d + bc + dv + 3) + bc * (d + dv); }

bool mask_bool(const KernelParams& p) {
    return p.inputs.size() > 3 && (p.inputs[3].dtype == DataType::boolean || p.inputs[3].dtype == DataType::u8);
}

void update(const KernelParams& p, const OclDeviceLimits& limits, std::vector<OclStageRun>& runs) {
    const Shape mask = p.inputs.size() > 3 ? p.inputs[3].get_shape() : Shape{};
    const Dims g =
        dims_of(p.inputs.at(0).get_shape(), p.inputs.at(1).get_shape(), p.inputs.at(2).get_shape(),
                p.inputs.size() > 3 ? &mask : nullptr, p.inputs.size() > 3 ? p.inputs[3].dtype : DataType::f32);
    OclStageRun& run = runs.at(0);
    run.scalars.clear();
    run.dispatch = OclDispatch{};
    if (g.b * g.hq * g.sq * g.dv == 0) {   // an empty output: nothing to launch
        run.dispatch.gws[0] = 0;
        return;
    }
    size_t bc = kTileKeys;
    const size_t have = limits.local_mem_bytes;
    while (bc > 1 && have != 0 && local_floats(g.d, g.dv, bc) * sizeof(float) > have) bc /= 2;
    const size_t bytes = local_floats(g.d, g.dv, bc) * sizeof(float);
    if (have != 0 && bytes > have)
        throw Error("sdpa on OpenCL: head sizes D " + std::to_string(g.d) + " and Dv " + std::to_string(g.dv) +
                    " need " + std::to_string(bytes) + " bytes of local memory, the device has " +
                    std::to_string(have));
    size_t group = kGroup;
    while (group > 1 && limits.max_work_group_size != 0 && group > limits.max_work_group_size) group /= 2;
    const size_t blocks = (g.sq + kBlockRows - 1) / kBlockRows;
    run.dispatch.gws[0] = checked_mul(checked_mul(g.b * g.hq, blocks, "sdpa work-groups"), group, "sdpa work size");
    run.dispatch.lws[0] = group;
    run.dispatch.dims = 1;
    run.scalars = {OclArg::local(bytes), OclArg::f32(static_cast<float>(scale_of(*p.attrs, g.d))),
                   OclArg::i32(static_cast<int32_t>(bc))};
}

// Declines head sizes known (static in the node) to need more local memory
// than the device has even with one key per tile: the host impls serve
// them. Head sizes that change between runs are checked at each change.
std::string fits_local_memory(const KernelParams& p) {
    const Dimension& d = p.inputs.at(0).shape[3];
    const Dimension& dv = p.inputs.at(2).shape[3];
    OclDevice* device = p.engine ? OclDevice::from(*p.engine) : nullptr;
    if (!device || !d.is_static() || !dv.is_static()) return {};
    const size_t have = device->limits().local_mem_bytes;
    const size_t need =
        local_floats(static_cast<size_t>(d.get_length()), static_cast<size_t>(dv.get_length()), 1) * sizeof(float);
    if (have == 0 || need <= have) return {};
    return "head sizes D " + std::to_string(d.get_length()) + " and Dv " + std::to_string(dv.get_length()) + " need " +
           std::to_string(need) + " bytes of local memory, the device has " + std::to_string(have);
}

// The shape-agnostic build keeps the heads and head sizes (dims 1 and 3 of
// q, k, v) as literals where the node has them static: they do not change
// between runs, and literal loop bounds over D unroll.
Layout agnostic_input(const KernelParams& p, size_t i) {
    const Layout& l = p.inputs.at(i);
    std::vector<Dimension> dims(l.shape.rank(), Dimension());
    if (i < 3 && p.node_inputs && i < p.node_inputs->size()) {
        const PartialShape& node = (*p.node_inputs)[i].shape;
        for (size_t a : {size_t{1}, size_t{3}})
            if (a < node.rank() && a < dims.size() && node[a].is_static()) dims[a] = node[a];
    }
    return Layout(PartialShape(dims), l.dtype, l.format);
}

OclMultiKernelSpec ocl_spec() {
    OclMultiKernelSpec spec;
    spec.source = sdpa_cl;
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"BR", std::to_string(kBlockRows)},
                          {"HAS_MASK", p.inputs.size() > 3 ? "1" : "0"},
                          {"MASK_BOOL", mask_bool(p) ? "1" : "0"},
                          {"CAUSAL", std::to_string(static_cast<int64_t>(causal_of(*p.attrs)))},
                          {"ZERO_MASKED_ROWS", zero_masked_rows(*p.attrs) ? "1" : "0"},
                          jit_data_f16(p.inputs.at(0).dtype)};
    };
    spec.stages = [](const KernelParams&, bool) {
        OclStage stage;   // the default arguments: inputs, output, scalars
        stage.kernel_name = "sdpa_flash";
        return std::vector<OclStage>{stage};
    };
    spec.update = update;
    spec.dynamic_input = agnostic_input;
    return spec;
}

}   // namespace

void register_ocl_impls(ModuleRegistrar& reg) {
    add_ocl_multi_impls(reg, "sdpa", ocl_spec(), ocl_options({DataType::f32, DataType::f16}, fits_local_memory));
}

}   // namespace sdpa
