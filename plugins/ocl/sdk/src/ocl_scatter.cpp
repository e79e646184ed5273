#include "dynrt/ocl_scatter.hpp"

#include <climits>

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
            {apply, {OclArgRef::input(1), OclArgRef::input(2), OclArgRef::output(0), OclArgRef::report()}}};
}

OclDispatch dispatch_scatter_copy(const KernelParams& p, const OclDeviceLimits& l) {
    return dispatch_1d(p.outputs.at(0).count(), l);
}

bool scatter_bad_index(const std::vector<int32_t>& report, ScatterBadIndex* bad) {
    if (report.at(0) == 0) return false;
    bad->position = uint32_t(report[0]) - 1;
    bad->value = static_cast<int64_t>(uint64_t(uint32_t(report.at(2))) << 32 | uint32_t(report.at(1)));
    return true;
}

std::string check_scatter_report_fits(const KernelParams& p, size_t i) {
    const PartialShape& indices = p.inputs.at(i).shape;
    if (indices.is_static() && indices.to_shape().count() >= uint64_t(INT32_MAX)) return "2^31 - 1 indices or more";
    return {};
}

}   // namespace dynrt
