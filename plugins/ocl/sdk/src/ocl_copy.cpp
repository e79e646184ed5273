#include "dynrt/ocl_copy.hpp"

#include <utility>

#include "copy_cl.hpp"

namespace dynrt {

void add_copy_ocl_impls(ModuleRegistrar& reg, const std::string& op, OclImplOptions options) {
    OclKernelSpec spec;
    spec.source = copy_cl;
    spec.kernel_name = "layout_copy";
    spec.defines = [](const KernelParams& p, bool) {
        return JitDefines{{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)}};
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_vec4(p.outputs.at(0).count(), limits);
    };
    options.validate = [extra = std::move(options.validate)](const KernelParams& p) -> std::string {
        if (p.inputs.at(0).count() != p.outputs.at(0).count()) return "input and output element counts differ";
        return extra ? extra(p) : std::string();
    };
    add_ocl_impls(reg, op, std::move(spec), std::move(options));
}

}   // namespace dynrt
