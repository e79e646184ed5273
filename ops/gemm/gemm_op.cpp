// gemm: y = alpha * op(a) @ op(b) + beta * c, batched with numpy broadcasting.
//
// op(x) is x or its transpose over the last two dims. Leading (batch) dims of a
// and b broadcast against each other; the optional c broadcasts to the output.
// Accumulation is in double. The op is critical: a dynamic impl serves new
// shapes while a static one is built in the background.
#include <algorithm>
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/cpu_matmul.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_matmul.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using dynrt::DataType;
using dynrt::Dimension;
using dynrt::PartialShape;
using dynrt::Shape;

PartialShape leading(const PartialShape& s) { return PartialShape(std::vector<Dimension>(s.begin(), s.end() - 2)); }

std::vector<dynrt::Layout> infer(const dynrt::ShapeInferContext& ctx) {
    const dynrt::Layout& a = ctx.inputs.at(0);
    const dynrt::Layout& b = ctx.inputs.at(1);
    if (!dynrt::is_floating(a.dtype)) throw dynrt::Error("gemm takes floating-point inputs, got " + a.to_string());
    if (a.dtype != b.dtype)
        throw dynrt::Error("gemm inputs must have the same data type, got " + a.to_string() + " and " + b.to_string());
    if (a.shape.rank() < 2 || b.shape.rank() < 2)
        throw dynrt::Error("gemm needs inputs of rank >= 2, got " + a.shape.to_string() + " and " +
                           b.shape.to_string());
    const bool ta = ctx.attrs.get_bool("transpose_a");
    const bool tb = ctx.attrs.get_bool("transpose_b");
    const size_t ra = a.shape.rank(), rb = b.shape.rank();
    const Dimension m = ta ? a.shape[ra - 1] : a.shape[ra - 2];
    const Dimension k_a = ta ? a.shape[ra - 2] : a.shape[ra - 1];
    const Dimension k_b = tb ? b.shape[rb - 1] : b.shape[rb - 2];
    const Dimension n = tb ? b.shape[rb - 2] : b.shape[rb - 1];
    if (!k_a.compatible(k_b))
        throw dynrt::Error("gemm: a " + a.shape.to_string() + (ta ? " (transposed)" : "") +
                           " has K=" + k_a.to_string() + " but b " + b.shape.to_string() + (tb ? " (transposed)" : "") +
                           " has K=" + k_b.to_string());
    PartialShape batch;
    try {
        batch = dynrt::broadcast_shapes(leading(a.shape), leading(b.shape));
    } catch (const dynrt::Error& e) {
        throw dynrt::Error("gemm: batch dims of a " + a.shape.to_string() + " and b " + b.shape.to_string() +
                           " do not broadcast (" + e.message() + ")");
    }
    std::vector<Dimension> out(batch.begin(), batch.end());
    out.push_back(m);
    out.push_back(n);
    if (ctx.inputs.size() > 2) {
        const dynrt::Layout& c = ctx.inputs[2];
        if (c.dtype != a.dtype)
            throw dynrt::Error("gemm: c " + c.to_string() + " must have the data type of a " + a.to_string());
        bool ok = c.shape.rank() <= out.size();
        const size_t lead = out.size() - std::min(out.size(), c.shape.rank());
        for (size_t d = 0; ok && d < c.shape.rank(); ++d) {
            const Dimension& cd = c.shape[d];
            ok = cd == Dimension(1) || cd.compatible(out[d + lead]);
        }
        if (!ok)
            throw dynrt::Error("gemm: c " + c.to_string() + " does not broadcast to the output " +
                               dynrt::Layout(PartialShape(out), a.dtype).to_string());
    }
    return {dynrt::Layout(PartialShape(out), a.dtype)};
}

// Element strides of `in` (right-aligned) over `out`'s index space; 0 where it
// broadcasts.
std::vector<size_t> broadcast_strides(const Shape& in, const Shape& out) {
    std::vector<size_t> s(out.size(), 0);
    const size_t lead = out.size() - in.size();
    size_t stride = 1;
    for (size_t d = in.size(); d-- > 0;) {
        s[d + lead] = in[d] == 1 ? 0 : stride;
        stride *= static_cast<size_t>(in[d]);
    }
    return s;
}

void kernel(dynrt::HostCall& call) {
    const bool ta = call.attrs().get_bool("transpose_a");
    const bool tb = call.attrs().get_bool("transpose_b");
    const double alpha = call.attrs().get_float("alpha");
    const double beta = call.attrs().get_float("beta");
    const Shape& as = call.in_shape(0);
    const Shape& bs = call.in_shape(1);
    const Shape& os = call.out_shape(0);
    const size_t ra = as.rank(), rb = bs.rank(), ro = os.rank();
    const size_t M = static_cast<size_t>(ta ? as[ra - 1] : as[ra - 2]);
    const size_t K = static_cast<size_t>(ta ? as[ra - 2] : as[ra - 1]);
    const size_t N = static_cast<size_t>(tb ? bs[rb - 2] : bs[rb - 1]);
    const size_t Kb = static_cast<size_t>(tb ? bs[rb - 1] : bs[rb - 2]);
    if (K != Kb) throw dynrt::Error("gemm: a " + as.to_string() + " and b " + bs.to_string() + " disagree on K");

    // Batch strides in units of whole matrices; c strides over the full output.
    Shape out_batch(std::vector<int64_t>(os.begin(), os.end() - 2));
    const std::vector<size_t> sa = broadcast_strides(Shape(std::vector<int64_t>(as.begin(), as.end() - 2)), out_batch);
    const std::vector<size_t> sb = broadcast_strides(Shape(std::vector<int64_t>(bs.begin(), bs.end() - 2)), out_batch);
    const bool has_c = call.num_inputs() > 2;
    std::vector<size_t> sc;
    if (has_c) {
        const Shape& cs = call.in_shape(2);
        for (size_t d = 0; d < cs.rank(); ++d)
            if (cs[d] != 1 && cs[d] != os[d + ro - cs.rank()])
                throw dynrt::Error("gemm: c " + cs.to_string() + " does not broadcast to output " + os.to_string());
        sc = broadcast_strides(cs, os);
    }

    const size_t batches = out_batch.count();
    for (size_t bi = 0; bi < batches; ++bi) {
        size_t a_base = 0, b_base = 0, c_base = 0, rem = bi;
        for (size_t d = out_batch.rank(); d-- > 0;) {
            const size_t i = rem % static_cast<size_t>(out_batch[d]);
            rem /= static_cast<size_t>(out_batch[d]);
            a_base += i * sa[d];
            b_base += i * sb[d];
            if (has_c) c_base += i * sc[d];
        }
        a_base *= M * K;
        b_base *= K * N;
        for (size_t m = 0; m < M; ++m) {
            for (size_t n = 0; n < N; ++n) {
                double acc = 0.0;
                for (size_t k = 0; k < K; ++k) {
                    const double av = call.get(0, a_base + (ta ? k * M + m : m * K + k));
                    const double bv = call.get(1, b_base + (tb ? n * K + k : k * N + n));
                    acc += av * bv;
                }
                double y = alpha * acc;
                if (has_c) y += beta * call.get(2, c_base + m * sc[ro - 2] + n * sc[ro - 1]);
                call.set(0, (bi * M + m) * N + n, y);
            }
        }
    }
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_gemm(dynrt::ImportContext& c) {
    if (c.has("broadcast") && c.i("broadcast", 0) == 0)
        return c.unsupported("Gemm with broadcast=0 (opset < 7) is not supported");
    if (!c.only_attrs({"alpha", "beta", "transA", "transB", "broadcast"})) return false;
    for (size_t k : {0, 1})
        if (c.rank(k) != 2) return c.unsupported("Gemm input " + std::to_string(k) + " is not 2-D");
    c.set("transpose_a", c.i("transA", 0) != 0);
    c.set("transpose_b", c.i("transB", 0) != 0);
    c.set("alpha", c.f("alpha", 1.0));
    c.set("beta", c.f("beta", 1.0));
    c.use_inputs({0, 1, 2});
    return true;
}

bool onnx_matmul(dynrt::ImportContext& c) {
    if (!c.only_attrs({})) return false;
    for (size_t k : {0, 1})
        if (c.rank(k) < 2)
            return c.unsupported("MatMul with a 1-D operand (input " + std::to_string(k) + ") is not supported");
    c.use_inputs({0, 1});
    return true;
}

std::vector<dynrt::ImportRule> onnx_rules() {
    return {dynrt::onnx_rule("Gemm", 2, 3, onnx_gemm,
                             "`transA/transB` -> `transpose_a/transpose_b`, `alpha`, `beta`; `C` optional"),
            dynrt::onnx_rule("MatMul", 2, 2, onnx_matmul, "batch dims broadcast; 1-D operands unsupported")};
}

// Permutation folding: a transpose of the last two dims of a or b (the other
// dims in place) is the product's transpose flag of that operand, toggled.
std::optional<dynrt::Attributes> absorb_permutation(const dynrt::Attributes& attrs, size_t input,
                                                    const std::vector<size_t>& perm) {
    const size_t r = perm.size();
    if (input > 1 || r < 2 || perm[r - 2] != r - 1 || perm[r - 1] != r - 2) return std::nullopt;
    for (size_t i = 0; i + 2 < r; ++i)
        if (perm[i] != i) return std::nullopt;
    const char* flag = input == 0 ? "transpose_a" : "transpose_b";
    dynrt::Attributes out = attrs;
    out.set(flag, !attrs.get_bool(flag));
    return out;
}

// The product gemm's attributes make.
dynrt::MatmulVariant variant(const dynrt::KernelParams& p) {
    dynrt::MatmulVariant v;
    v.ta = p.attrs->get_bool("transpose_a");
    v.tb = p.attrs->get_bool("transpose_b");
    v.alpha = p.attrs->get_float("alpha");
    v.beta = p.attrs->get_float("beta");
    return v;
}

void register_gemm(dynrt::ModuleRegistrar& reg) {
    dynrt::OpDefinition def = dynrt::op_def(
        "gemm", "Batched matrix product y = alpha * op(a) @ op(b) + beta * c", 2, 3,
        {dynrt::attr_bool("transpose_a", false, "use a transposed over its last two dims"),
         dynrt::attr_bool("transpose_b", false, "use b transposed over its last two dims"),
         dynrt::attr_float("alpha", 1.0, "scale of the product"), dynrt::attr_float("beta", 1.0, "scale of c")},
        infer);
    def.traits.critical = true;
    def.traits.accepts_fused_ops = true;   // host impls apply them (docs/architecture.md, "Fusion")
    def.traits.weightable = true;          // b, when constant (no impl prefers a blocked format yet)
    def.weights_input = 1;
    // A multiply-add per output element and element of K; every tensor moves once.
    def.cost = [](const std::vector<dynrt::Layout>& in, const std::vector<dynrt::Layout>& out,
                  const dynrt::Attributes& attrs) {
        dynrt::OpCost c = dynrt::io_bytes_cost(in, out);
        const dynrt::Shape a = in.at(0).get_shape();
        const bool ta = attrs.has("transpose_a") && attrs.get_bool("transpose_a");
        if (a.size() >= 2)
            c.flops = 2.0 * static_cast<double>(out.at(0).get_shape().count()) *
                      static_cast<double>(a[a.size() - (ta ? 2 : 1)]);
        return c;
    };
    def.imports = onnx_rules();
    def.absorb_permutation = absorb_permutation;
    reg.add_op(def);

    dynrt::add_host_impls(reg, "gemm", kernel, dynrt::host_options({DataType::f32, DataType::f16}));
    // cpu: oneDNN's matmul (dynrt/cpu_matmul.hpp), one primitive for every shape.
    dynrt::add_dnnl_matmul_impls(reg, "gemm", variant);

    // OpenCL: the SDK's matrix-product kernels (tiled for large M, skinny for
    // decode shapes; dynrt/ocl_matmul.hpp); f16 falls back to the host impls.
    dynrt::OclMatmulHooks hooks;
    hooks.variant = variant;
    hooks.sizes = [](const dynrt::KernelParams& p) {
        // Reads the dims without building Shapes.
        const bool ta = p.attrs->get_bool("transpose_a");
        const bool tb = p.attrs->get_bool("transpose_b");
        const dynrt::PartialShape& as = p.inputs[0].shape;
        const dynrt::PartialShape& bs = p.inputs[1].shape;
        const dynrt::PartialShape& os = p.outputs[0].shape;
        const size_t ra = as.rank(), rb = bs.rank();
        dynrt::OclMatmulSizes s;
        s.M = static_cast<size_t>((ta ? as[ra - 1] : as[ra - 2]).get_length());
        s.N = static_cast<size_t>((tb ? bs[rb - 2] : bs[rb - 1]).get_length());
        s.batches = 1;
        for (size_t d = 0; d + 2 < os.rank(); ++d) s.batches *= static_cast<size_t>(os[d].get_length());
        return s;
    };
    dynrt::add_ocl_matmul_impls(reg, "gemm", hooks);
}

}   // namespace

DYNRT_MODULE("gemm", register_gemm)
