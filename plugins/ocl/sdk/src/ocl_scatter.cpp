#include "dynrt/ocl_scatter.hpp"

#include "ocl_scatter_cl.hpp"

namespace dynrt {

std::string ocl_scatter_source(const char* source) {
    // `#line 1` restarts the numbering, so build logs give the op's .cl lines.
    return std::string(ocl_scatter_cl) + "\n#line 1\n" + source;
}

JitDefines jit_scatter_defines(DataType t, ScatterReduction r) {
    const bool none = r == ScatterReduction::none;
    const bool half = t == DataType::f16 && !none;
    const std::string elem = none ? ocl_bits_type(t) : ocl_type_name(t);
    return JitDefines{{"BITS_T", ocl_bits_type(t)},
                      {"ELEM_T", elem},
                      {"VALUE_T", half ? "float" : elem},
                      {"DATA_F16", half ? "1" : "0"},
                      {"IS_INTEGER", is_floating(t) ? "0" : "1"},
                      {"UVALUE_T", is_floating(t) ? elem : ocl_bits_type(t)},
                      {"REDUCTION", std::to_string(static_cast<size_t>(r))},
                      {"USES_F64", t == DataType::f64 && !none ? "1" : "0"}};
}

std::vector<OclStage> scatter_stages(const std::string& apply) {
    return {{"scatter_copy", {OclArgRef::input(0), OclArgRef::output(0)}},
            {apply, {OclArgRef::input(1), OclArgRef::input(2), OclArgRef::output(0)}}};
}

OclDispatch dispatch_scatter_copy(const KernelParams& p, const OclDeviceLimits& l) {
    return dispatch_1d(p.outputs.at(0).count(), l);
}

}   // namespace dynrt
