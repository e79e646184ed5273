// JIT code for fused post-ops in OpenCL kernels (see ocl_fused_ops.hpp).
#include "dynrt/ocl_fused_ops.hpp"

#include <cctype>

#include "dynrt/error.hpp"
#include "dynrt/op_registry.hpp"

namespace dynrt {

std::vector<Layout> fused_extra_layouts(const KernelParams& p) {
    std::vector<Layout> out;
    for (const auto& f : p.fused_ops)
        for (size_t i = 0; i < f.inputs.size(); ++i)
            if (i != f.main_input) out.push_back(f.inputs[i]);
    return out;
}

std::string check_ocl_fused_ops(const KernelParams& p) {
    if (p.outputs.empty() || p.outputs[0].dtype != DataType::f32) return "fused ops need an f32 output";
    if (p.outputs[0].shape.rank() > kShapeInfoDims) return "fused ops need rank <= 8";
    for (const auto& f : p.fused_ops) {
        if (!f.op || !f.op->ocl_post_op) return "fused op '" + f.node + "' has no OpenCL post-op code";
        for (const auto& l : f.inputs) {
            if (l.dtype != DataType::f32) return "fused op '" + f.node + "' has a non-f32 input";
            if (!l.padding.empty()) return "fused op '" + f.node + "' has a padded input";
            if (l.shape.rank() > kShapeInfoDims) return "fused op '" + f.node + "' has rank above 8";
        }
    }
    return {};
}

void pack_shape_info_fused(const ShapeInfoPlan& plan, const KernelParams& p, std::vector<int32_t>& out) {
    if (p.fused_ops.empty()) {
        pack_shape_info(plan, p.inputs, p.outputs, out);
        return;
    }
    std::vector<Layout> planned = p.inputs;
    for (const Layout& l : fused_extra_layouts(p)) planned.push_back(l);
    pack_shape_info(plan, planned, p.outputs, out);
}

std::string replace_identifier(const std::string& expr, const std::string& from, const std::string& to) {
    auto ident = [](char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; };
    std::string out;
    size_t i = 0;
    while (i < expr.size()) {
        if (ident(expr[i])) {
            size_t j = i;
            while (j < expr.size() && ident(expr[j])) ++j;
            const std::string word = expr.substr(i, j - i);
            out += word == from ? to : word;
            i = j;
        } else {
            out += expr[i++];
        }
    }
    return out;
}

namespace {

// Product of the JIT dims `prefix`_DIM<from>..7 as an OpenCL expression.
std::string dims_product(const std::string& prefix, size_t from) {
    std::string s = "(ulong)1";
    for (size_t k = from; k < kShapeInfoDims; ++k) s += "*(ulong)(" + prefix + "_DIM" + std::to_string(k) + ")";
    return s;
}

}   // namespace

JitDefines fused_ops_defines(const KernelParams& p, const std::vector<Layout>& extras, const std::vector<int>& slots) {
    // JIT constants are object-like macros: FUSED_OPS reads the kernel's
    // `fused_v` (float, updated in place) and `fused_oi` (ulong output index).
    JitDefines d;
    if (p.fused_ops.empty()) {
        d.emplace_back("HAS_FUSED_OPS", "0");
        d.emplace_back("FUSED_OPS_ARGS", "");
        d.emplace_back("FUSED_OPS_PASS", "");
        d.emplace_back("FUSED_OPS", "");
        return d;
    }
    std::string args, pass;
    std::vector<std::string> loads;
    for (size_t k = 0; k < extras.size(); ++k) {
        const std::string name = "FUSED_INPUT" + std::to_string(k);
        const int slot = k < slots.size() ? slots[k] : -1;
        JitDefines t = tensor_jit_defines(name, extras[k], slot);
        d.insert(d.end(), t.begin(), t.end());
        args += ", __global const " + name + "_TYPE* fused_input" + std::to_string(k);
        pass += ", fused_input" + std::to_string(k);
        // Broadcast index: output coordinate modulo the input's extent (1 or
        // the output's) times the input's stride, over the 8 right-aligned dims.
        std::string idx;
        for (size_t dim = 0; dim < kShapeInfoDims; ++dim) {
            if (dim) idx += "+";
            idx += "((fused_oi/(" + dims_product("OUTPUT0", dim + 1) + "))%(ulong)(OUTPUT0_DIM" + std::to_string(dim) +
                   ")%(ulong)(" + name + "_DIM" + std::to_string(dim) + "))*(" + dims_product(name, dim + 1) + ")";
        }
        loads.push_back("((float)fused_input" + std::to_string(k) + "[" + idx + "])");
    }
    d.emplace_back("HAS_FUSED_OPS", "1");
    d.emplace_back("FUSED_OPS_ARGS", args);
    d.emplace_back("FUSED_OPS_PASS", pass);
    std::string body = "{ float fo_x = fused_v;";
    size_t extra = 0;
    for (const FusedOpDesc& f : p.fused_ops) {
        std::vector<std::string> call;
        for (size_t i = 0; i < f.inputs.size(); ++i) call.push_back(i == f.main_input ? "fo_x" : loads.at(extra++));
        body += " fo_x = (" + f.op->ocl_post_op(*f.attrs, call) + ");";
    }
    body += " fused_v = fo_x; }";
    d.emplace_back("FUSED_OPS", body);
    return d;
}

}   // namespace dynrt
