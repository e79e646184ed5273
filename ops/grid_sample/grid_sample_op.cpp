// grid_sample: samples x [N, C, D1..Dr] at the normalised positions of grid
// [N, O1..Or, r] (ONNX GridSample), giving y [N, C, O1..Or].
//
// grid's last axis holds one coordinate per spatial axis in reverse order
// (x for the last axis Dr, then y, then z), each in [-1, 1] from one edge to
// the other: the centres of the corner elements with align_corners, their
// outer edges without. A position is interpolated from its neighbours along
// every spatial axis (nearest: 1, linear: 2, cubic: 4 with Keys' a = -0.75);
// neighbours outside x are 0 (zeros), the edge element (border) or mirrored
// back in (reflection). Positions past the borders are first clamped
// (border) or reflected (reflection) into them, as the ONNX reference does.
#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_import.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "grid_sample_cl.hpp"

namespace {

using namespace dynrt;

constexpr const char* kOp = "grid_sample";
constexpr size_t kMaxSpatial = 3;   // 3-D to 5-D x, as far as the ONNX spec reaches
const std::vector<std::string> kModes = {"nearest", "linear", "cubic"};
const std::vector<std::string> kPaddings = {"zeros", "border", "reflection"};
enum Mode { kNearest, kLinear, kCubic };
enum Padding { kZeros, kBorder, kReflection };

Error node_error(const ShapeInferContext& ctx, const std::string& field, const std::string& message) {
    return Error(message, node_context(ctx.node, kOp, field));
}

bool same_static(const Dimension& a, const Dimension& b) { return !a.is_static() || !b.is_static() || a == b; }

std::vector<Layout> infer(const ShapeInferContext& ctx) {
    const Layout& x = ctx.inputs.at(0);
    const Layout& grid = ctx.inputs.at(1);
    const std::string shapes = "x " + x.to_string() + " and grid " + grid.to_string();
    if (!is_floating(x.dtype)) throw node_error(ctx, "x", "grid_sample takes a floating-point x, got " + x.to_string());
    if (!is_floating(grid.dtype))
        throw node_error(ctx, "grid", "grid_sample takes a floating-point grid, got " + grid.to_string());
    const size_t rank = x.shape.rank();
    if (rank < 3 || rank > kMaxSpatial + 2)
        throw node_error(ctx, "x", "x " + x.to_string() + " must have rank 3 to 5 (N, C and 1 to 3 spatial dims)");
    if (grid.shape.rank() != rank) throw node_error(ctx, "grid", shapes + " must have the same rank");
    const Dimension& last = grid.shape[rank - 1];
    if (last.is_static() && last.get_length() != static_cast<int64_t>(rank - 2))
        throw node_error(ctx, "grid",
                         shapes + ": grid's last dim must be the spatial rank " + std::to_string(rank - 2));
    if (!same_static(x.shape[0], grid.shape[0])) throw node_error(ctx, "grid", shapes + " must have the same batch");
    if (ctx.attrs.get_string("mode") == "cubic" && rank != 4)
        throw node_error(ctx, "mode", "mode cubic takes a 4-D x (2 spatial dims), got " + x.to_string());
    std::vector<Dimension> out = {x.shape[0].is_static() ? x.shape[0] : grid.shape[0], x.shape[1]};
    for (size_t d = 1; d + 1 < rank; ++d) out.push_back(grid.shape[d]);
    return {Layout(PartialShape(out), x.dtype)};
}

// ---- reference ------------------------------------------------------------

struct Sampling {
    Mode mode;
    Padding padding;
    bool align;
};

Sampling sampling_of(const Attributes& a) {
    return {static_cast<Mode>(mode_index(kOp, kModes, a.get_string("mode"))),
            static_cast<Padding>(mode_index(kOp, kPaddings, a.get_string("padding_mode"))),
            a.get_bool("align_corners")};
}

// Folds v into [lo, hi] by mirroring at the nearer border until it is inside.
double reflect(double v, double lo, double hi) {
    const double range = hi - lo;
    if (range <= 0) return lo;
    if (v >= lo && v <= hi) return v;
    const double d = v < lo ? lo - v : v - hi;
    const double folds = std::floor(d / range), r = d - folds * range;
    const bool from_low = (v < lo) == (std::fmod(folds, 2.0) == 0.0);
    return from_low ? lo + r : hi - r;
}

// v where every neighbour lies inside or within reach (cubic: 2) of x, else
// a position 4 outside that has the same (zero) neighbours: a NaN or a huge
// coordinate then never reaches an integer conversion.
double far_outside(double v, double n) {
    if (!(v > -4)) return -4;
    return v < n + 4 ? v : n + 4;
}

// The position of normalised coordinate g along an axis of `size` elements,
// moved into the borders as padding_mode says.
double position(const Sampling& s, double g, int64_t size) {
    const auto n = static_cast<double>(size);
    double v = s.align ? (g + 1) / 2 * (n - 1) : ((g + 1) * n - 1) / 2;
    if (s.mode == kNearest) v = std::nearbyint(v);   // half to even, as the ONNX test data has it
    const double lo = s.align ? 0.0 : -0.5, hi = s.align ? n - 1 : n - 0.5;
    if (v >= lo && v <= hi) return v;
    if (s.padding == kBorder) v = std::min(std::max(v, 0.0), n - 1);
    if (s.padding == kReflection) v = reflect(v, lo, hi);
    return far_outside(v, n);
}

// Element index of neighbour i along an axis of `size`, or -1 for a zero.
int64_t neighbour(const Sampling& s, int64_t i, int64_t size) {
    if (i >= 0 && i < size) return i;
    if (s.padding == kZeros || size == 0) return -1;
    if (s.padding == kBorder) return i < 0 ? 0 : size - 1;
    const auto n = static_cast<double>(size);
    return static_cast<int64_t>(s.align ? reflect(static_cast<double>(i), 0, n - 1)
                                        : reflect(static_cast<double>(i), -0.5, n - 0.5));
}

// Keys' cubic convolution weights (a = -0.75) of the 4 neighbours at t in [0, 1).
std::array<double, 4> cubic_weights(double t) {
    constexpr double kA = -0.75;
    const double t1 = t + 1, u = 1 - t, u1 = 2 - t;
    return {((kA * t1 - 5 * kA) * t1 + 8 * kA) * t1 - 4 * kA, ((kA + 2) * t - (kA + 3)) * t * t + 1,
            ((kA + 2) * u - (kA + 3)) * u * u + 1, ((kA * u1 - 5 * kA) * u1 + 8 * kA) * u1 - 4 * kA};
}

// The neighbours of one position along one axis: the first one's index and each one's weight.
struct Taps {
    int64_t first = 0;
    std::array<double, 4> weight{};
};

Taps taps_of(const Sampling& s, double v) {
    const double f = std::floor(v), t = v - f;
    const auto base = static_cast<int64_t>(f);
    if (s.mode == kNearest) return {static_cast<int64_t>(v), {1, 0, 0, 0}};
    if (s.mode == kLinear) return {base, {1 - t, t, 0, 0}};
    return {base - 1, cubic_weights(t)};
}

void reference(HostCall& call) {
    const Sampling s = sampling_of(call.attrs());
    const Shape& xs = call.in_shape(0);
    const Shape& ys = call.out_shape(0);
    const size_t r = xs.rank() - 2, taps = s.mode == kNearest ? 1 : s.mode == kLinear ? 2 : 4;
    const size_t planes = dims_product(ys, 0, 2), out_sp = dims_product(ys, 2, ys.rank());
    const size_t in_sp = dims_product(xs, 2, xs.rank()), channels = static_cast<size_t>(xs[1]);
    size_t combos = 1;
    for (size_t d = 0; d < r; ++d) combos *= taps;
    std::vector<Taps> along(r);
    for (size_t p = 0; p < planes; ++p) {
        const size_t n = p / channels;
        for (size_t o = 0; o < out_sp; ++o) {
            for (size_t d = 0; d < r; ++d)
                along[d] = taps_of(s, position(s, call.get(1, (n * out_sp + o) * r + (r - 1 - d)), xs[2 + d]));
            double sum = 0;
            for (size_t c = 0; c < combos; ++c) {
                double w = 1;
                size_t at = 0;
                bool zero = false;
                for (size_t d = 0, rest = c; d < r; ++d, rest /= taps) {
                    const size_t k = rest % taps;
                    const int64_t i = neighbour(s, along[d].first + static_cast<int64_t>(k), xs[2 + d]);
                    zero = zero || i < 0;
                    w *= along[d].weight[k];
                    at = at * static_cast<size_t>(xs[2 + d]) + static_cast<size_t>(i < 0 ? 0 : i);
                }
                if (!zero) sum += w * call.get(0, p * in_sp + at);
            }
            call.set(0, p * out_sp + o, sum);
        }
    }
}

// ---- OpenCL ---------------------------------------------------------------

std::string check_ocl(const KernelParams& p) {
    if (p.inputs.at(1).dtype != p.inputs.at(0).dtype)
        return std::string("grid type ") + to_string(p.inputs.at(1).dtype) + " differs from x's " +
               to_string(p.inputs.at(0).dtype);
    return {};
}

OclKernelSpec ocl_spec() {
    OclKernelSpec spec;
    spec.source = grid_sample_cl;
    spec.kernel_name = "grid_sample_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const Sampling s = sampling_of(*p.attrs);
        const size_t rank = p.inputs.at(0).shape.rank(), r = rank - 2;
        JitDefines d{{"SP_RANK", std::to_string(r)},
                     {"MODE", std::to_string(static_cast<int>(s.mode))},
                     {"PADDING", std::to_string(static_cast<int>(s.padding))},
                     {"ALIGN_CORNERS", s.align ? "1" : "0"},
                     {"CHANNELS", jit_dims_product("INPUT0", rank, 1, 2)},
                     {"IN_SPATIAL", jit_dims_product("INPUT0", rank, 2, rank)},
                     {"OUT_SPATIAL", jit_dims_product("OUTPUT0", rank, 2, rank)},
                     jit_data_f16(p.inputs.at(0).dtype)};
        // Spatial extents of x, the missing axes 1.
        for (size_t k = 0; k < kMaxSpatial; ++k)
            d.push_back({"SIZE" + std::to_string(k), k < r ? "INPUT0_DIM" + std::to_string(8 - r + k) : "1"});
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& l) {
        return dispatch_1d(p.outputs.at(0).count(), l);
    };
    return spec;
}

// ---- ONNX -----------------------------------------------------------------

// GridSample-16 names the modes bilinear and bicubic and takes 4-D x only;
// GridSample-20 renamed them linear and cubic and took N-D x.
bool onnx_grid_sample(ImportContext& c) {
    if (!c.only_attrs({"mode", "padding_mode", "align_corners"})) return false;
    const bool v16 = c.opset() < 20;
    // This opset's names, in the order of kModes.
    const std::vector<std::string> names = v16 ? std::vector<std::string>{"nearest", "bilinear", "bicubic"} : kModes;
    const std::string mode = c.s("mode", names[kLinear]);
    const auto it = std::find(names.begin(), names.end(), mode);
    if (it == names.end())
        return c.unsupported("GridSample mode '" + mode + "' is not one of opset " + std::to_string(c.opset()) + "'s");
    if (v16 && c.rank(0) != 4) return c.unsupported("GridSample before opset 20 takes a 4-D X only");
    c.set("mode", kModes[static_cast<size_t>(it - names.begin())]);
    c.set("padding_mode", c.s("padding_mode", "zeros"));
    c.set("align_corners", c.i("align_corners", 0) != 0);
    c.use_inputs({0, 1});
    return true;
}

void register_grid_sample(ModuleRegistrar& reg) {
    OpDefinition def = op_def(
        kOp, "Samples x at normalised grid positions: nearest, linear or cubic (ONNX GridSample)", 2, 2,
        {attr_string("mode", std::string("linear"), kModes, "interpolation: nearest, linear or cubic (4-D x only)"),
         attr_string("padding_mode", std::string("zeros"), kPaddings,
                     "values outside x: zeros, the border element, or reflected"),
         attr_bool("align_corners", false, "-1 and 1 are the corner elements' centres (else their outer edges)")},
        infer);
    def.imports = {onnx_rule("GridSample", 2, 2, onnx_grid_sample,
                             "`mode` (bilinear/bicubic before opset 20), `padding_mode`, `align_corners`")};
    reg.add_op(def);
    const std::vector<DataType> dtypes = {DataType::f32, DataType::f16};
    add_host_impls(reg, kOp, reference, host_options(dtypes));
    add_ocl_impls(reg, kOp, ocl_spec(), ocl_options(dtypes, check_ocl));
}

}   // namespace

DYNRT_MODULE("grid_sample", register_grid_sample)
