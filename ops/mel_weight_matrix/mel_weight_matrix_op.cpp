// mel_weight_matrix: the matrix [dft_length / 2 + 1, num_mel_bins] that maps
// a onesided spectrum to mel bands (ONNX MelWeightMatrix, opset 17), as the
// ONNX reference builds it: num_mel_bins + 2 edges evenly spaced in mel,
//   mel(f) = 2595 log10(1 + f / 700),  step = (mel(upper) - mel(lower)) / (num_mel_bins + 2),
//   edge[e] = floor((dft_length + 1) * hz(mel(lower) + e * step) / sample_rate),
// and band i a triangle over the spectrogram bins j: rising (j - l) / (c - l)
// from edge l = edge[i] to c = edge[i + 1], falling (h - j) / (h - c) from c
// to h = edge[i + 2] (exclusive), 1 at c when c == l.
//
// The five inputs are scalars read by value: num_mel_bins and dft_length size
// the output, and the bands must fit the spectrogram (an upper edge above the
// Nyquist frequency is an error naming upper_edge_hertz). Edges are computed
// in double on the host and in FLOAT_ACC on OpenCL.
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "mel_weight_matrix_cl.hpp"

namespace {

using namespace dynrt;

const char* const kNames[] = {"num_mel_bins", "dft_length", "sample_rate", "lower_edge_hertz", "upper_edge_hertz"};
const std::vector<std::string> kTypes = {"f32", "f16", "f64"};

Error node_error(const std::string& node, const std::string& field, const std::string& message) {
    return Error(message, node_context(node, "mel_weight_matrix", field));
}

struct Mel {
    int64_t bands = 0, dft_length = 0, sample_rate = 0;
    double lower = 0, upper = 0;
    int64_t bins() const { return dft_length / 2 + 1; }
};

// Edge e of the bands (e in [0, bands + 2)), a whole number as a double:
// +inf for edge frequencies too high to count (check() refuses those before
// any edge is cast to an integer).
double edge(const Mel& m, int64_t e) {
    const double low = 2595.0 * std::log10(1.0 + m.lower / 700.0);
    const double high = 2595.0 * std::log10(1.0 + m.upper / 700.0);
    const double step = (high - low) / static_cast<double>(m.bands + 2);
    const double hz = 700.0 * std::expm1((static_cast<double>(e) * step + low) / 2595.0 * std::log(10.0));
    return std::floor(static_cast<double>(m.dft_length + 1) * hz / static_cast<double>(m.sample_rate));
}

void check(const std::string& node, const Mel& m) {
    if (m.bands < 1)
        throw node_error(node, "num_mel_bins", "num_mel_bins is " + std::to_string(m.bands) + ", it must be >= 1");
    if (m.dft_length < 1)
        throw node_error(node, "dft_length", "dft_length is " + std::to_string(m.dft_length) + ", it must be >= 1");
    if (m.sample_rate < 1)
        throw node_error(node, "sample_rate", "sample_rate is " + std::to_string(m.sample_rate) + ", it must be >= 1");
    if (!(m.lower >= 0) || !(m.upper >= m.lower))
        throw node_error(node, "lower_edge_hertz",
                         "the edges " + std::to_string(m.lower) + " and " + std::to_string(m.upper) +
                             " Hz must satisfy 0 <= lower_edge_hertz <= upper_edge_hertz");
    // The edges rise with e: the last is the largest.
    const double last = edge(m, m.bands + 1);
    if (!(last < static_cast<double>(m.bins())))
        throw node_error(node, "upper_edge_hertz",
                         "upper_edge_hertz " + std::to_string(m.upper) + " reaches spectrogram bin " +
                             std::to_string(last) + ", beyond the " + std::to_string(m.bins()) +
                             " bins of dft_length " + std::to_string(m.dft_length) + " (keep it <= sample_rate / 2)");
}

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    for (size_t i = 0; i < 5; ++i) {
        const Layout& l = ctx.inputs.at(i);
        const bool integer = i < 3;
        if (l.shape.rank() != 0 || l.dtype == DataType::boolean || is_floating(l.dtype) != !integer)
            throw node_error(ctx.node, kNames[i],
                             std::string(kNames[i]) + " must be " + (integer ? "an integer" : "a floating-point") +
                                 " scalar, got " + l.to_string());
    }
    const DataType out = parse_data_type(ctx.attrs.get_string("dtype"));
    // The sizes, checked as soon as each is known; the rest once all five are.
    const auto size = [&](size_t i) {
        if (ctx.value(i) == nullptr) return Dimension();
        const int64_t v = ctx.value(i)->to_int64().at(0);   // a scalar: one element
        if (v < 1)
            throw node_error(ctx.node, kNames[i],
                             std::string(kNames[i]) + " is " + std::to_string(v) + ", it must be >= 1");
        if (v > (int64_t{1} << 31))
            throw node_error(ctx.node, kNames[i], std::string(kNames[i]) + " " + std::to_string(v) + " is above 2^31");
        return Dimension(i == 1 ? v / 2 + 1 : v);
    };
    const Dimension bands = size(0), bins = size(1);
    for (size_t i = 0; i < 5; ++i)
        if (ctx.value(i) == nullptr) return {Layout(PartialShape{bins, bands}, out)};
    Mel m;
    m.bands = ctx.value(0)->to_int64()[0];
    m.dft_length = ctx.value(1)->to_int64()[0];
    m.sample_rate = ctx.value(2)->to_int64()[0];
    m.lower = ctx.value(3)->get_as_double(0);
    m.upper = ctx.value(4)->get_as_double(0);
    check(ctx.node, m);
    return {Layout(PartialShape{Dimension(m.bins()), Dimension(m.bands)}, out)};
}

// ---- reference ------------------------------------------------------------

// The weight of spectrogram bin j in a band with edges l <= c <= h.
double weight(int64_t j, int64_t l, int64_t c, int64_t h) {
    if (h > c && j >= c && j < h) return static_cast<double>(h - j) / static_cast<double>(h - c);
    if (j == c) return 1.0;
    if (j >= l && j < c) return static_cast<double>(j - l) / static_cast<double>(c - l);
    return 0.0;
}

void reference(HostCall& call) {
    Mel m;
    m.bands = call.get_ints(0)[0];
    m.dft_length = call.get_ints(1)[0];
    m.sample_rate = call.get_ints(2)[0];
    m.lower = call.get(3, 0);
    m.upper = call.get(4, 0);
    std::vector<int64_t> edges(static_cast<size_t>(m.bands + 2));
    for (int64_t e = 0; e < m.bands + 2; ++e)   // in [0, bins): checked by shape inference
        edges[static_cast<size_t>(e)] = static_cast<int64_t>(edge(m, e));
    const auto bands = static_cast<size_t>(m.bands);
    for (size_t j = 0; j < static_cast<size_t>(m.bins()); ++j)
        for (size_t i = 0; i < bands; ++i)
            call.set(0, j * bands + i, weight(static_cast<int64_t>(j), edges[i], edges[i + 1], edges[i + 2]));
}

// ---- OpenCL ---------------------------------------------------------------

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = mel_weight_matrix_cl;
    spec.kernel_name = "mel_weight_matrix_bands";
    spec.defines = [](const KernelParams& p, bool) { return JitDefines{jit_data_f16(p.outputs.at(0).dtype)}; };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// f32 and f16 matrices, f32 edges; the integer inputs as i32 or i64.
std::string ocl_validate(const KernelParams& p) {
    const DataType t = p.outputs.at(0).dtype;
    if (t != DataType::f32 && t != DataType::f16)
        return std::string("the OpenCL kernel writes f32 or f16, not ") + to_string(t);
    for (size_t i = 0; i < 3; ++i)
        if (p.inputs.at(i).dtype != DataType::i32 && p.inputs.at(i).dtype != DataType::i64)
            return std::string(kNames[i]) + " must be i32 or i64 here";
    for (size_t i = 3; i < 5; ++i)
        if (p.inputs.at(i).dtype != DataType::f32) return std::string(kNames[i]) + " must be f32 here";
    return "";
}

// ---- ONNX -----------------------------------------------------------------

bool onnx_mel(ImportContext& c) {
    if (!c.only_attrs({"output_datatype"})) return false;
    const int64_t t = c.i("output_datatype", 1);
    const char* type = t == 1 ? "f32" : t == 10 ? "f16" : t == 11 ? "f64" : nullptr;
    if (type == nullptr)
        return c.unsupported("MelWeightMatrix's output_datatype " + std::to_string(t) +
                             ": the matrix is written as float, float16 or double only");
    c.set("dtype", std::string(type));
    c.use_inputs({0, 1, 2, 3, 4});
    return true;
}

void register_mel_weight_matrix(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("mel_weight_matrix", "triangular mel bands over a onesided spectrum, [dft_length / 2 + 1, num_mel_bins]",
               5, 5, {attr_string("dtype", std::string("f32"), kTypes, "the output's type")}, infer);
    def.value_inputs = {0, 1, 2, 3, 4};
    def.imports = {onnx_rule("MelWeightMatrix", 5, 5, onnx_mel,
                             "the five scalars as inputs (read by value); `output_datatype` float, float16, double")};
    reg.add_op(def);
    // The inputs and output 0 differ in type: no dtype filter.
    add_host_impls(reg, "mel_weight_matrix", reference);
    add_ocl_impls(reg, "mel_weight_matrix", ocl_spec(), ocl_options({}, ocl_validate));
}

}   // namespace

DYNRT_MODULE("mel_weight_matrix", register_mel_weight_matrix)
