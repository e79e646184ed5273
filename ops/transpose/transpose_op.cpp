// transpose: the input's dims permuted (ONNX Transpose): output dim i is input
// dim perm[i], and out[c0, ..., cn-1] = in[x] with x[perm[i]] = ci. An empty
// `perm` reverses the dims.
//
// The reference walks the output in order with an odometer over its
// coordinates and copies each element's bytes from its input position, so it
// serves every data type and any rank.
//
// The optimised impl (cpu_opt_*) first collapses the problem: size-1 dims are
// dropped and output dims that stay adjacent and in order in the input merge,
// so [1,S,H,D] with perm [0,2,1,3] becomes [H,S,D] reading D-long rows. When
// the input's innermost dim stays last it copies contiguous runs; otherwise it
// walks 2-D tiles of the output dim that is innermost in the input and the
// last output dim, so reads and writes both stay within a few cache lines.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_parallel.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_impl.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"
#include "transpose_cl.hpp"

namespace {

using namespace dynrt;

// The permutation for an input of rank `rank`: the attribute, or the reversed
// dims when it is empty. Anything but a permutation of 0..rank-1 is an error
// naming the node, the attribute and the input shape.
std::vector<size_t> resolve_perm(const std::string& node, const Attributes& attrs, const PartialShape& in) {
    const size_t rank = in.rank();
    const std::vector<int64_t> perm = attrs.get_ints("perm");
    std::vector<size_t> out;
    if (perm.empty()) {
        for (size_t i = 0; i < rank; ++i) out.push_back(rank - 1 - i);
        return out;
    }
    ErrorContext where;
    where.node = node;
    where.op = "transpose";
    where.field = "perm";
    const std::string what = "perm " + ints_to_string(perm) + " is not a permutation of the " + std::to_string(rank) +
                             " dims of input " + in.to_string();
    if (perm.size() != rank) throw Error(what + ": it has " + std::to_string(perm.size()) + " entries", where);
    std::vector<bool> seen(rank, false);
    for (const int64_t p : perm) {
        if (p < 0 || p >= static_cast<int64_t>(rank))
            throw Error(what + ": " + std::to_string(p) + " is not in [0, " + std::to_string(rank) + ")", where);
        if (seen[static_cast<size_t>(p)]) throw Error(what + ": " + std::to_string(p) + " appears twice", where);
        seen[static_cast<size_t>(p)] = true;
        out.push_back(static_cast<size_t>(p));
    }
    return out;
}

std::vector<Layout> infer_transpose(const ShapeInferContext& ctx) {
    const Layout& in = ctx.inputs.at(0);
    const std::vector<size_t> perm = resolve_perm(ctx.node, ctx.attrs, in.shape);
    std::vector<Dimension> out;
    for (const size_t p : perm) out.push_back(in.shape[p]);
    return {Layout(PartialShape(std::move(out)), in.dtype)};
}

void transpose_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const Shape& out = call.out_shape(0);
    const std::vector<size_t> perm = resolve_perm(call.node(), call.attrs(), PartialShape(in));
    const size_t rank = in.rank();
    const size_t count = out.count();
    if (count == 0) return;
    const size_t width = byte_size(call.in_type(0));
    checked_mul(count, width, "transpose: bytes of the output");
    const std::vector<size_t> in_strides = strides_of(in);
    // Input stride of each output dim: moving one step along output dim i moves
    // one step along input dim perm[i].
    std::vector<size_t> step(rank);
    for (size_t i = 0; i < rank; ++i) step[i] = in_strides[perm[i]];
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    std::vector<int64_t> coord(rank, 0);
    size_t from = 0;   // input element of the output element `o`
    for (size_t o = 0; o < count; ++o) {
        std::memcpy(dst + o * width, src + from * width, width);
        // Next output coordinate (innermost first), keeping `from` in step.
        for (size_t i = rank; i-- > 0;) {
            if (++coord[i] < out[i]) {
                from += step[i];
                break;
            }
            from -= static_cast<size_t>(coord[i] - 1) * step[i];
            coord[i] = 0;
        }
    }
}

// ---- optimised cpu impl ----------------------------------------------------

// One dim of the collapsed copy, in output order: its size and the input
// stride (in elements) of one step along it.
struct MovedDim {
    size_t size;
    size_t in_stride;
};

// The transpose as few dims as possible: size-1 dims dropped, and output dims
// i, i+1 merged when a step along i is a whole run of i+1 in the input too.
std::vector<MovedDim> collapse(const Shape& in, const std::vector<size_t>& perm) {
    const std::vector<size_t> in_strides = strides_of(in);
    std::vector<MovedDim> dims;
    for (const size_t p : perm) {
        const size_t size = static_cast<size_t>(in[p]);
        if (size == 1) continue;
        if (!dims.empty() && dims.back().in_stride == size * in_strides[p]) {
            dims.back() = {dims.back().size * size, in_strides[p]};
        } else {
            dims.push_back({size, in_strides[p]});
        }
    }
    return dims;
}

// Input and output offsets of an index over some of the collapsed dims (the
// "outer" ones the threads split), stepped like an odometer.
class Odometer {
public:
    Odometer(std::vector<MovedDim> dims, std::vector<size_t> out_strides)
        : dims_(std::move(dims)), out_strides_(std::move(out_strides)), coord_(dims_.size(), 0) {}

    void seek(size_t index) {
        in_ = out_ = 0;
        for (size_t i = dims_.size(); i-- > 0;) {
            coord_[i] = index % dims_[i].size;
            index /= dims_[i].size;
            in_ += coord_[i] * dims_[i].in_stride;
            out_ += coord_[i] * out_strides_[i];
        }
    }

    void next() {
        for (size_t i = dims_.size(); i-- > 0;) {
            in_ += dims_[i].in_stride;
            out_ += out_strides_[i];
            if (++coord_[i] < dims_[i].size) return;
            in_ -= coord_[i] * dims_[i].in_stride;
            out_ -= coord_[i] * out_strides_[i];
            coord_[i] = 0;
        }
    }

    size_t in() const { return in_; }
    size_t out() const { return out_; }

private:
    std::vector<MovedDim> dims_;
    std::vector<size_t> out_strides_;
    std::vector<size_t> coord_;
    size_t in_ = 0, out_ = 0;
};

// Output strides (elements) of the collapsed dims, row-major.
std::vector<size_t> out_strides_of(const std::vector<MovedDim>& dims) {
    std::vector<size_t> strides(dims.size(), 1);
    for (size_t i = dims.size(); i-- > 1;) strides[i - 1] = strides[i] * dims[i].size;
    return strides;
}

constexpr size_t kGrainElements = 16384;   // elements below which a thread's chunk is not worth it

// The innermost input dim stays last: every output row (the last dim)
// is one contiguous input run.
void copy_runs(const CpuThreads& threads, const std::vector<MovedDim>& dims, size_t count, const unsigned char* src,
               unsigned char* dst, size_t width) {
    const std::vector<MovedDim> outer(dims.begin(), dims.end() - 1);
    const size_t run = dims.back().size;
    const size_t runs = count / run;
    const std::vector<size_t> out_strides = out_strides_of(dims);
    parallel_for(threads, runs, std::max<size_t>(1, kGrainElements / run), [&](size_t begin, size_t end) {
        Odometer at(outer, std::vector<size_t>(out_strides.begin(), out_strides.end() - 1));
        at.seek(begin);
        for (size_t r = begin; r < end; ++r, at.next())
            std::memcpy(dst + at.out() * width, src + at.in() * width, run * width);
    });
}

// The innermost input dim `inner` (input stride 1) moved before the last
// output dim: tiles of kTile x kTile elements over those two dims; a work item
// is one strip of kTile steps along `inner` across the whole last dim.
template <typename T>
void copy_tiles(const CpuThreads& threads, const std::vector<MovedDim>& dims, size_t count, size_t inner, const T* src,
                T* dst) {
    constexpr size_t kTile = std::max<size_t>(16, 128 / sizeof(T));   // 128 bytes along the contiguous side
    const std::vector<size_t> out_strides = out_strides_of(dims);
    std::vector<MovedDim> outer;
    std::vector<size_t> outer_out;
    for (size_t i = 0; i + 1 < dims.size(); ++i) {
        if (i == inner) continue;
        outer.push_back(dims[i]);
        outer_out.push_back(out_strides[i]);
    }
    const size_t rows = dims[inner].size, row_out = out_strides[inner];
    const size_t cols = dims.back().size, col_in = dims.back().in_stride;
    const size_t strips = (rows + kTile - 1) / kTile;
    const size_t items = count / (rows * cols) * strips;   // at most `count`: strips <= rows
    parallel_for(threads, items, std::max<size_t>(1, kGrainElements / (kTile * cols)), [&](size_t begin, size_t end) {
        Odometer at(outer, outer_out);
        at.seek(begin / strips);
        for (size_t item = begin; item < end; ++item) {
            if (item != begin && item % strips == 0) at.next();
            const size_t r0 = item % strips * kTile, r1 = std::min(rows, r0 + kTile);
            for (size_t c0 = 0; c0 < cols; c0 += kTile) {
                const size_t c1 = std::min(cols, c0 + kTile);
                for (size_t r = r0; r < r1; ++r) {
                    const T* from = src + at.in() + r;
                    T* to = dst + at.out() + r * row_out;
                    for (size_t c = c0; c < c1; ++c) to[c] = from[c * col_in];
                }
            }
        }
    });
}

template <typename T>
void copy_tiles_as(const CpuThreads& threads, const std::vector<MovedDim>& dims, size_t count, size_t inner,
                   const void* src, void* dst) {
    copy_tiles(threads, dims, count, inner, static_cast<const T*>(src), static_cast<T*>(dst));
}

void fast_kernel(HostCall& call) {
    const Shape& in = call.in_shape(0);
    const size_t count = call.out_shape(0).count();
    if (count == 0) return;
    const size_t width = byte_size(call.in_type(0));
    checked_mul(count, width, "transpose: bytes of the output");
    const std::vector<MovedDim> dims = collapse(in, resolve_perm(call.node(), call.attrs(), PartialShape(in)));
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(call.out_raw(0));
    const CpuThreads threads(call.params().engine);
    if (dims.empty() || dims.back().in_stride == 1) {
        // Collapsed to a plain copy (one dim) or rows that stay contiguous.
        copy_runs(threads, dims.empty() ? std::vector<MovedDim>{{1, 1}} : dims, count, src, dst, width);
        return;
    }
    size_t inner = 0;
    while (dims[inner].in_stride != 1) ++inner;
    switch (width) {
        case 1: return copy_tiles_as<uint8_t>(threads, dims, count, inner, src, dst);
        case 2: return copy_tiles_as<uint16_t>(threads, dims, count, inner, src, dst);
        case 4: return copy_tiles_as<uint32_t>(threads, dims, count, inner, src, dst);
        default: return copy_tiles_as<uint64_t>(threads, dims, count, inner, src, dst);
    }
}

// The tile loop moves elements as unsigned integers of 1, 2, 4 or 8 bytes.
std::string fast_supported(const KernelParams& p) {
    const size_t width = byte_size(p.inputs.at(0).dtype);
    if (width != 1 && width != 2 && width != 4 && width != 8)
        return "elements of " + std::to_string(width) + " bytes: the tile loop moves 1, 2, 4 or 8";
    return {};
}

// ---- OpenCL ---------------------------------------------------------------

constexpr size_t kOclMaxRank = 8;   // dims the shape info and JIT constants hold

OclKernelSpec transpose_ocl_spec() {
    OclKernelSpec spec;
    spec.source = transpose_cl;
    spec.kernel_name = "transpose_ref";
    spec.defines = [](const KernelParams& p, bool) {
        const PartialShape& in = p.inputs.at(0).shape;
        const size_t rank = in.rank();
        const std::vector<size_t> perm = resolve_perm(p.node, *p.attrs, in);
        JitDefines d = {{"ELEM_T", ocl_bits_type(p.inputs.at(0).dtype)}, {"TRANSPOSE_RANK", std::to_string(rank)}};
        // Right-aligned positions: output position j = lead + i reads input
        // position lead + perm[i]; the leading positions map to themselves.
        const size_t lead = kOclMaxRank - rank;
        for (size_t j = 0; j < kOclMaxRank; ++j) {
            const size_t from = j < lead ? j : lead + perm[j - lead];
            d.emplace_back("PERM" + std::to_string(j), std::to_string(from));
        }
        return d;
    };
    spec.dispatch = [](const KernelParams& p, const OclDeviceLimits& limits) {
        return dispatch_1d(p.outputs.at(0).count(), limits);
    };
    return spec;
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_transpose(ImportContext& c) {
    if (!c.only_attrs({"perm"})) return false;
    if (c.has("perm")) c.set("perm", c.ints("perm"));
    c.use_inputs({0});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Transpose", 1, 1, onnx_transpose, "`perm` (default: the dims reversed)")};
}

void register_transpose(ModuleRegistrar& reg) {
    OpDefinition def =
        op_def("transpose", "Permutes the dims: output dim i is input dim perm[i] (ONNX Transpose)", 1, 1,
               {attr_ints("perm", std::vector<int64_t>{}, "a permutation of 0..rank-1; empty: the dims reversed")},
               infer_transpose);
    def.imports = onnx_rules();
    reg.add_op(def);
    add_host_impls(reg, "transpose", transpose_kernel);
    add_host_impls(reg, "transpose", fast_kernel, optimised_host_options({}, fast_supported));
    const auto rank_fits = [](const KernelParams& p) -> std::string {
        if (p.inputs.at(0).shape.rank() > kOclMaxRank)
            return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above " + std::to_string(kOclMaxRank);
        return {};
    };
    add_ocl_impls(reg, "transpose", transpose_ocl_spec(), ocl_options({}, rank_fits));
}

}   // namespace

DYNRT_MODULE("transpose", register_transpose)
