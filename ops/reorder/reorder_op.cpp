// reorder: the same tensor in another memory format.
//
// The flow runs it to put constant weights into the format an impl prefers
// (ImplEntry::weights_format, "update_weights" in docs/architecture.md); a
// graph may use it too. Attribute `format` names the output format
// (layout.hpp: plain, osv16); the input may be in any format. Values are copied
// bit for bit; the tail of a blocked dim is zero.
#include <cstdint>
#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_sdk.hpp"
#include "reorder_cl.hpp"

namespace {

using dynrt::DataType;
using dynrt::Format;

std::vector<std::string> format_names() { return {"plain", "osv16"}; }

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& in = ctx.inputs.at(0);
    const Format f = dynrt::parse_format(ctx.attrs.get_string("format"));
    if (dynrt::is_blocked(f) && in.shape.rank() < 1)
        throw dynrt::Error(std::string("reorder to ") + dynrt::to_string(f) + " needs rank >= 1, got " +
                           in.to_string());
    return {dynrt::Layout(in.shape, in.dtype, f)};
}

// Logical index -> storage index on both sides; bytes copied as they are.
void host_reorder(dynrt::ExecContext& ctx) {
    const dynrt::KernelParams& p = ctx.params;
    const dynrt::Layout& il = p.inputs.at(0);
    const dynrt::Layout& ol = p.outputs.at(0);
    const dynrt::Shape s = il.get_shape();
    const size_t esize = dynrt::byte_size(il.dtype);
    dynrt::MappedMemory in(*ctx.inputs.at(0), ctx.stream);
    dynrt::MappedMemory out(*ctx.outputs.at(0), ctx.stream);
    const auto* src = static_cast<const uint8_t*>(in.data());
    auto* dst = static_cast<uint8_t*>(out.data());
    std::memset(dst, 0, ol.bytes());   // zero tail of a blocked dim
    const size_t n = s.count();
    for (size_t i = 0; i < n; ++i)
        std::memcpy(dst + dynrt::storage_index(s, ol.format, i) * esize,
                    src + dynrt::storage_index(s, il.format, i) * esize, esize);
}

class HostReorder final : public dynrt::Impl {
public:
    explicit HostReorder(bool dynamic) : dynamic_(dynamic) {}
    void execute(dynrt::ExecContext& ctx) override { host_reorder(ctx); }
    std::string name() const override { return dynamic_ ? "reorder_cpu_ref_dynamic" : "reorder_cpu_ref_static"; }
    bool is_dynamic() const override { return dynamic_; }

private:
    bool dynamic_;
};

std::string check_dense(const dynrt::KernelParams& p) {
    for (const auto& l : p.inputs)
        if (!l.padding.empty()) return "padded tensors are not supported";
    for (const auto& l : p.outputs)
        if (!l.padding.empty()) return "padded tensors are not supported";
    if (p.inputs.at(0).dtype != p.outputs.at(0).dtype) return "reorder keeps the data type";
    return {};
}

void register_reorder(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def = dynrt::op_def(
        "reorder", "Copy of a tensor in another memory format (plain, osv16)", 1, 1,
        {dynrt::attr_string("format", std::string("plain"), format_names(), "output memory format")}, infer);
    // The flow reorders constant weights through this op (OpDefinition::convert_format).
    def.convert_format = [](dynrt::Format target) {
        dynrt::Attributes attrs;
        attrs.set("format", std::string(dynrt::to_string(target)));
        return attrs;
    };
    reg.add_op(def);

    // Host impls (any format in and out; the generic host entry takes plain only).
    for (bool dynamic : {true, false}) {
        dynrt::ImplEntry e;
        e.name = dynamic ? "cpu_ref_dynamic" : "cpu_ref_static";
        e.reference = true;
        e.impl_type = "cpu";
        e.shape_type = dynamic ? dynrt::ShapeType::dynamic_shape : dynrt::ShapeType::static_shape;
        e.validate = check_dense;
        e.create = [dynamic](const dynrt::KernelParams&) -> std::unique_ptr<dynrt::Impl> {
            return std::make_unique<HostReorder>(dynamic);
        };
        reg.add_impl("reorder", std::move(e));
    }

    // OpenCL: one work-item per output storage element (reorder.cl).
    dynrt::OclKernelSpec spec;
    spec.source = reorder_cl;
    spec.kernel_name = "reorder_ref";
    spec.defines = [](const dynrt::KernelParams& p, bool) {
        return dynrt::JitDefines{{"IN_BLOCK", std::to_string(dynrt::block_size(p.inputs.at(0).format))},
                                 {"OUT_BLOCK", std::to_string(dynrt::block_size(p.outputs.at(0).format))}};
    };
    spec.dispatch = [](const dynrt::KernelParams& p, const dynrt::OclDeviceLimits& lim) {
        return dynrt::dispatch_1d(p.outputs.at(0).storage_count(), lim);
    };
    spec.scalars = [](const dynrt::KernelParams& p) {
        const dynrt::Shape s = p.inputs.at(0).get_shape();
        const int64_t dim0 = s.rank() ? s[0] : 1;
        const int64_t inner = dim0 > 0 ? static_cast<int64_t>(s.count()) / dim0 : 0;
        return std::vector<dynrt::OclArg>{dynrt::OclArg::i64(dim0), dynrt::OclArg::i64(inner),
                                          dynrt::OclArg::i64(static_cast<int64_t>(p.outputs.at(0).storage_count()))};
    };
    dynrt::OclImplOptions ocl;
    ocl.formats = {dynrt::Format::plain, dynrt::Format::osv16};   // the kernel indexes both
    ocl.validate = check_dense;
    dynrt::add_ocl_impls(reg, "reorder", spec, ocl);
}

}   // namespace

DYNRT_MODULE("reorder", register_reorder)
