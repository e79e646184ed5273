#include "dynrt/ocl_loss.hpp"

#include <utility>

#include "dynrt/op_index.hpp"
#include "ocl_loss_cl.hpp"

namespace dynrt {

namespace {

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

OclKernelSpec ocl_loss_spec(const std::string& op, const char* source, std::string kernel_name) {
    OclKernelSpec spec;
    spec.source = source;
    spec.kernel_name = std::move(kernel_name);
    spec.defines = [op](const KernelParams& p, bool) {
        const size_t rank = p.inputs.at(0).shape.rank();
        const DataType t = p.inputs.at(0).dtype;
        const std::string inner = jit_dims_product("INPUT0", rank, 2, rank);
        JitDefines d = {{"ACC_T", "FLOAT_ACC"},
                        {"REAL", t == DataType::f64 ? "double" : "float"},
                        {"REDUCTION", std::to_string(static_cast<int>(loss_reduction_of(op, *p.attrs)))},
                        {"HAS_WEIGHT", p.inputs.size() > 2 ? "1" : "0"},
                        {"IGNORE_INDEX", std::to_string(p.attrs->get_int("ignore_index")) + "L"},
                        {"C_LEN", jit_dims_product("INPUT0", rank, 1, 2)},
                        {"INNER", inner},
                        {"POSITIONS", "(" + jit_dims_product("INPUT0", rank, 0, 1) + "*" + inner + ")"}};
        d.push_back(jit_data_f16(t));
        return d;
    };
    spec.dispatch = [op](const KernelParams& p, const OclDeviceLimits& l) {
        if (loss_reduction_of(op, *p.attrs) != LossReduction::none) return dispatch_1d(1, l);
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

}   // namespace

std::string ocl_loss_source(const char* source) {
    // `#line 1` restarts the numbering, so build logs give the op's .cl lines.
    return std::string(ocl_loss_cl) + "\n#line 1\n" + source;
}

void add_loss_impls(ModuleRegistrar& reg, const std::string& op, HostKernel kernel, const char* source,
                    std::string kernel_name, const std::string& target) {
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16, DataType::f64};
    add_host_impls(reg, op, std::move(kernel),
                   host_options(dtypes, [target](const KernelParams& p) { return check_index_input(p, 1, target); }));
    add_ocl_impls(
        reg, op, ocl_loss_spec(op, source, std::move(kernel_name)),
        ocl_options(dtypes, [target](const KernelParams& p) { return check_index_input(p, 1, target, kOclMaxRank); }));
}

}   // namespace dynrt
