// The op "tm_double" (y = 2 * x on f32; ONNX "TmDouble" of the default domain,
// no attributes) for the bisect tests (tests/bisect_test.cpp). Its host
// reference impls are right. Its "drops_post_ops" impls, ranked above them,
// declare that they take fused post-ops (ImplEntry::fused_ops) and never
// apply them: an elementwise consumer fused into tm_double (a Relu) then
// gives wrong numbers while the fusion pass is on and right ones without it.
// A bug injected on purpose, so that the bisect test never relies on a real
// one staying.
#include <memory>

#include "dynrt/module_abi.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

void twice(HostCall& c) {
    const size_t n = c.out_shape(0).count();
    const float* x = c.in<float>(0);
    float* y = c.out<float>(0);
    for (size_t i = 0; i < n; ++i) y[i] = 2.0f * x[i];
}

class DropsPostOps : public Impl {
public:
    explicit DropsPostOps(bool dynamic) : dynamic_(dynamic) {}
    void execute(ExecContext& ctx) override {
        HostCall call(ctx);
        twice(call);   // ctx.params.fused_ops: never applied (the bug)
    }
    std::string name() const override { return dynamic_ ? "drops_post_ops_dynamic" : "drops_post_ops_static"; }
    bool is_dynamic() const override { return dynamic_; }

private:
    bool dynamic_;
};

void register_module(ModuleRegistrar& r) {
    OpDefinition def = op_def("tm_double", "test op: y = 2 * x; its optimised impl drops fused post-ops", 1, 1, {},
                              [](const ShapeInferContext& ctx) { return std::vector<Layout>{ctx.inputs.at(0)}; });
    def.traits.accepts_fused_ops = true;
    def.imports = {onnx_rule("TmDouble", 1, 1, import_plain(), "y = 2 * x")};
    r.add_op(def);
    add_host_impls(r, "tm_double", twice, host_options({DataType::f32}));
    for (const bool dynamic : {false, true}) {
        ImplEntry e;
        e.name = dynamic ? "drops_post_ops_dynamic" : "drops_post_ops_static";
        e.priority = 400;
        e.impl_type = "cpu";
        e.shape_type = dynamic ? ShapeType::dynamic_shape : ShapeType::static_shape;
        e.dtypes = {DataType::f32};
        e.formats = {Format::plain};
        e.fused_ops = true;
        e.validate = [](const KernelParams& p) -> std::string {
            return p.inputs.at(0).padding.empty() && p.outputs.at(0).padding.empty() ? "" : "padded";
        };
        e.create = [dynamic](const KernelParams&) -> std::unique_ptr<Impl> {
            return std::make_unique<DropsPostOps>(dynamic);
        };
        r.add_impl("tm_double", e);
    }
}

}   // namespace

DYNRT_MODULE("tm_bisect", register_module)
