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
// Its output may be padded (a slice of an in-place concat,
// dynrt/cpu_padded.hpp): output dims then merge only where the output's
// strides allow it too, and every write goes through them.
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/cpu_padded.hpp"
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

// One dim of the collapsed copy, in output order: its size and the input and
// output strides (in elements) of one step along it.
struct MovedDim {
    size_t size;
    size_t in_stride;
    size_t out_stride;
};

// The transpose as few dims as possible: size-1 dims dropped, and output dims
// i, i+1 merged when a step along i is a whole run of i+1 in the input and in
// the output (`out_strides`, per output dim: row-major, or a padded output's).
// The last dim steps one element in the output: a padded last output dim
// (a run of one) is followed by a dim of size 1.
std::vector<MovedDim> collapse(const Shape& in, const std::vector<size_t>& perm,
                               const std::vector<size_t>& out_strides) {
    const std::vector<size_t> in_strides = strides_of(in);
    std::vector<MovedDim> dims;
    for (size_t i = 0; i < perm.size(); ++i) {
        const size_t p = perm[i];
        const size_t size = static_cast<size_t>(in[p]);
        if (size == 1) continue;
        if (!dims.empty() && dims.back().in_stride == size * in_strides[p] &&
            dims.back().out_stride == size * out_strides[i]) {
            dims.back() = {dims.back().size * size, in_strides[p], out_strides[i]};
        } else {
            dims.push_back({size, in_strides[p], out_strides[i]});
        }
    }
    if (!dims.empty() && dims.back().out_stride != 1) dims.push_back({1, 1, 1});
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

// Output strides (elements) of the collapsed dims.
std::vector<size_t> out_strides_of(const std::vector<MovedDim>& dims) {
    std::vector<size_t> strides;
    for (const MovedDim& d : dims) strides.push_back(d.out_stride);
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

void fast_kernel(HostCall& call, const StridedOutput& out) {
    const Shape& in = call.in_shape(0);
    const size_t count = call.out_shape(0).count();
    if (count == 0) return;
    const size_t width = byte_size(call.in_type(0));
    checked_mul(count, width, "transpose: bytes of the output");
    const std::vector<MovedDim> dims =
        collapse(in, resolve_perm(call.node(), call.attrs(), PartialShape(in)), out.strides);
    const auto* src = static_cast<const unsigned char*>(call.in_raw(0));
    auto* dst = static_cast<unsigned char*>(out.data);
    const CpuThreads threads(call.params().engine);
    if (dims.empty() || dims.back().in_stride == 1) {
        // Collapsed to a plain copy (one dim) or rows that stay contiguous.
        copy_runs(threads, dims.empty() ? std::vector<MovedDim>{{1, 1, 1}} : dims, count, src, dst, width);
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
constexpr size_t kTile = 32;        // transpose.cl's TILE: a tile's side, in elements

// The transpose for the kernels, over as few dims as possible: input dims
// that stay adjacent and in order in the output merge into one collapsed dim.
// That depends on `perm` alone, so the shape-agnostic impl collapses too; the
// static impl first drops size-1 dims (they move nothing).
struct OclCollapse {
    std::vector<std::vector<size_t>> groups;   // input dims of each collapsed dim, collapsed dims in input order
    std::vector<size_t> perm;                  // output position k holds collapsed input dim perm[k]
    size_t rank() const { return perm.size(); }
    bool tiled() const { return perm.back() != rank() - 1; }   // the contiguous input dim moves
    size_t out_pos(size_t g) const {
        return static_cast<size_t>(std::find(perm.begin(), perm.end(), g) - perm.begin());
    }
};

// `ones`: the static input's shape, whose size-1 dims are dropped; null for
// the shape-agnostic impl. A transpose of nothing but size-1 dims (or of a
// scalar) is one collapsed dim of no input dim: extent 1.
OclCollapse collapse_for_ocl(const std::vector<size_t>& perm, const Shape* ones) {
    std::vector<std::vector<size_t>> runs;   // in output order
    for (const size_t d : perm) {
        if (ones && (*ones)[d] == 1) continue;
        // Input dims strictly between the run's last dim and d are size-1 dims that were dropped.
        bool follows = !runs.empty() && runs.back().back() < d;
        for (size_t k = follows ? runs.back().back() + 1 : d; k < d; ++k) follows = follows && ones && (*ones)[k] == 1;
        if (follows) runs.back().push_back(d);
        else runs.push_back({d});
    }
    OclCollapse c;
    if (runs.empty()) {
        c.groups = {{}};
        c.perm = {0};
        return c;
    }
    c.groups = runs;
    std::sort(c.groups.begin(), c.groups.end());
    for (const auto& r : runs)
        c.perm.push_back(static_cast<size_t>(std::find(c.groups.begin(), c.groups.end(), r) - c.groups.begin()));
    return c;
}

OclCollapse collapse_params(const KernelParams& p, bool dynamic) {
    const PartialShape& in = p.inputs.at(0).shape;
    const std::vector<size_t> perm = resolve_perm(p.node, *p.attrs, in);
    if (dynamic) return collapse_for_ocl(perm, nullptr);
    const Shape shape = in.to_shape();
    return collapse_for_ocl(perm, &shape);
}

// The runtime extents of the collapsed dims.
std::vector<size_t> collapsed_dims(const OclCollapse& c, const Shape& in) {
    std::vector<size_t> dims;
    for (const auto& g : c.groups) {
        size_t n = 1;
        for (const size_t d : g) n *= static_cast<size_t>(in[d]);
        dims.push_back(n);
    }
    return dims;
}

std::string product_of(const std::vector<std::string>& factors) {
    std::string e = "((ulong)1";
    for (const std::string& f : factors) e += "*" + f;
    return e + ")";
}

// JIT expressions (ulong) of the collapsed dims: literals in the static
// build (`in`: its shape), products of shape_info dims in the shape-agnostic one.
std::vector<std::string> collapsed_dim_exprs(const OclCollapse& c, const Shape* in, size_t rank) {
    std::vector<std::string> exprs;
    if (in) {
        for (const size_t n : collapsed_dims(c, *in)) exprs.push_back("((ulong)" + std::to_string(n) + ")");
        return exprs;
    }
    for (const auto& g : c.groups) {
        std::vector<std::string> factors;
        for (const size_t d : g) factors.push_back("(ulong)INPUT0_DIM" + std::to_string(kOclMaxRank - rank + d));
        exprs.push_back(product_of(factors));
    }
    return exprs;
}

// "a, b, c" (an array's initialiser; one filler entry when empty: OpenCL C
// has no arrays of size 0).
std::string list_of(const std::vector<std::string>& items, const std::string& filler) {
    if (items.empty()) return filler;
    std::string s;
    for (const std::string& i : items) s += (s.empty() ? "" : ", ") + i;
    return s;
}

// The JIT constants of transpose.cl: which kernel (TR_TILED), and for it the
// extents and strides of the collapsed dims as expressions.
JitDefines transpose_defines(const KernelParams& p, bool dynamic) {
    const Layout& in = p.inputs.at(0);
    const OclCollapse c = collapse_params(p, dynamic);
    const Shape shape = dynamic ? Shape{} : in.shape.to_shape();
    const std::vector<std::string> dim = collapsed_dim_exprs(c, dynamic ? nullptr : &shape, in.shape.rank());
    const size_t r = c.rank();
    // Input stride of collapsed dim g: the dims after it; output stride of position k: the output dims after it.
    const auto in_stride = [&](size_t g) {
        return product_of({dim.begin() + static_cast<std::ptrdiff_t>(g) + 1, dim.end()});
    };
    const auto out_stride = [&](size_t k) {
        std::vector<std::string> f;
        for (size_t j = k + 1; j < r; ++j) f.push_back(dim[c.perm[j]]);
        return product_of(f);
    };
    JitDefines d = {{"ELEM_T", ocl_bits_type(in.dtype)}, {"TR_TILED", c.tiled() ? "1" : "0"}};
    std::vector<std::string> outer_dims, outer_in, outer_out;
    if (!c.tiled()) {
        // Rows of the output (every position but the last) read contiguous input runs.
        for (size_t k = 0; k + 1 < r; ++k) {
            outer_dims.push_back(dim[c.perm[k]]);
            outer_in.push_back(in_stride(c.perm[k]));
        }
        d.insert(d.end(), {{"RUN_LEN", dim[r - 1]},
                           {"ROW_RANK", std::to_string(r - 1)},
                           {"ROWS", product_of(outer_dims)},
                           {"ROW_DIMS", list_of(outer_dims, "1")},
                           {"ROW_IN_STRIDES", list_of(outer_in, "0")}});
        return d;
    }
    // Tiles over A (the contiguous input dim) and B (the dim that ends the
    // output); the other output positions are the batch.
    const size_t a_pos = c.out_pos(r - 1), b = c.perm[r - 1];
    for (size_t k = 0; k + 1 < r; ++k) {
        if (k == a_pos) continue;
        outer_dims.push_back(dim[c.perm[k]]);
        outer_in.push_back(in_stride(c.perm[k]));
        outer_out.push_back(out_stride(k));
    }
    d.insert(d.end(), {{"TILE_A", dim[r - 1]},
                       {"TILE_B", dim[b]},
                       {"TILE_B_IN_STRIDE", in_stride(b)},
                       {"TILE_A_OUT_STRIDE", out_stride(a_pos)},
                       {"BATCH_RANK", std::to_string(r - 2)},
                       {"BATCH", product_of(outer_dims)},
                       {"BATCH_DIMS", list_of(outer_dims, "1")},
                       {"BATCH_IN_STRIDES", list_of(outer_in, "0")},
                       {"BATCH_OUT_STRIDES", list_of(outer_out, "0")}});
    return d;
}

size_t ceil_div(size_t a, size_t b) { return (a + b - 1) / b; }

size_t pow2_at_least(size_t n) {
    size_t p = 1;
    while (p < n) p *= 2;
    return p;
}

// Work-groups a grid-stride kernel launches at most: on a GPU a few full
// waves; on a CPU, where a strided walk defeats the caches, every group
// needed.
size_t group_budget(size_t needed, const OclDeviceLimits& l) {
    if (!l.is_gpu) return needed;
    return std::max<size_t>(1, std::min(needed, std::max<size_t>(l.compute_units, 1) * 16));
}

// transpose_runs: work-groups of `x` work-items along a row (enough for its
// 4-element vectors, at most the preferred size) by `y` rows.
OclDispatch runs_dispatch(size_t len, size_t rows, const OclDeviceLimits& l) {
    const size_t local = std::max<size_t>(1, std::min(l.preferred_local_size ? l.preferred_local_size : 64,
                                                      l.max_work_group_size ? l.max_work_group_size : 64));
    const size_t per_row = len % 4 == 0 ? len / 4 : len;
    const size_t x = std::min(local, pow2_at_least(per_row)), y = local / x;
    const size_t along = ceil_div(per_row, x), across = ceil_div(rows, y);
    const size_t gx = group_budget(along, l);
    // Grid dim 1 holds at most 65535 groups on some GPUs: the kernel loops over rows.
    const size_t gy = std::min<size_t>({across, std::max<size_t>(1, group_budget(along * across, l) / gx), 65535});
    OclDispatch d;
    d.dims = 2;
    d.lws = {x, y, 1};
    d.gws = {gx * x, gy * y, 1};
    return d;
}

// transpose_tiles: one work-group of kTile x kTileRows per tile, looping over
// the tiles.
OclDispatch tiles_dispatch(size_t tiles, const OclDeviceLimits& l) {
    OclDispatch d;
    d.dims = 2;
    d.lws = {kTile, kTile / 4, 1};
    d.gws = {group_budget(tiles, l) * kTile, kTile / 4, 1};
    return d;
}

OclMultiKernelSpec transpose_ocl_spec(bool dynamic) {
    OclMultiKernelSpec spec;
    spec.source = transpose_cl;
    spec.defines = transpose_defines;
    spec.stages = [dynamic](const KernelParams& p, bool) {
        return std::vector<OclStage>{{collapse_params(p, dynamic).tiled() ? "transpose_tiles" : "transpose_runs"}};
    };
    spec.update = [dynamic](const KernelParams& p, const OclDeviceLimits& l, std::vector<OclStageRun>& runs) {
        const Shape in = p.inputs.at(0).shape.to_shape();
        const OclCollapse c = collapse_params(p, dynamic);
        const std::vector<size_t> dims = collapsed_dims(c, in);
        const size_t count = in.count(), r = c.rank();
        if (count == 0) {
            runs[0].dispatch = dispatch_1d(0, l);
        } else if (!c.tiled()) {
            runs[0].dispatch = runs_dispatch(dims[r - 1], count / dims[r - 1], l);
        } else {
            const size_t a = dims[r - 1], b = dims[c.perm[r - 1]];
            runs[0].dispatch = tiles_dispatch(ceil_div(a, kTile) * ceil_div(b, kTile) * (count / (a * b)), l);
        }
    };
    return spec;
}

// The kernels index 8 right-aligned dims; a tile's work-group is kTile x kTile/4.
std::string ocl_fits(const KernelParams& p) {
    if (p.inputs.at(0).shape.rank() > kOclMaxRank)
        return "rank " + std::to_string(p.inputs.at(0).shape.rank()) + " is above " + std::to_string(kOclMaxRank);
    const OclDevice* dev = p.engine ? OclDevice::from(*p.engine) : nullptr;
    if (dev && dev->limits().max_work_group_size < kTile * kTile / 4)
        return "work-groups of " + std::to_string(dev->limits().max_work_group_size) + " work-items: the tiles need " +
               std::to_string(kTile * kTile / 4);
    return {};
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
    // A consumer that reads the input unpermuted takes this node's place
    // (Program: permutation folding).
    def.permutation = [](const Attributes& attrs, size_t rank) -> std::optional<std::vector<size_t>> {
        return resolve_perm("transpose", attrs, PartialShape::dynamic_of_rank(rank));
    };
    reg.add_op(def);
    add_host_impls(reg, "transpose", transpose_kernel);
    add_strided_output_impls(reg, "transpose", fast_kernel, optimised_host_options({}, fast_supported));
    // Registered apart: the static impl collapses size-1 dims away, so its
    // kernel and dispatch follow the shape.
    for (const bool dynamic : {true, false}) {
        OclImplOptions o = ocl_options({}, ocl_fits);
        o.register_dynamic = dynamic;
        o.register_static = !dynamic;
        add_ocl_multi_impls(reg, "transpose", transpose_ocl_spec(dynamic), o);
    }
}

}   // namespace

DYNRT_MODULE("transpose", register_transpose)
