// Helpers for op modules: host (reference) impls and shape-inference utilities.
//
// Most ops need only three things: an OpDefinition with a shape-inference
// function, a host kernel written as plain loops over a HostCall, and
// add_host_impls() to register it as the cpu reference impl in both flavours:
//   - "cpu_ref_dynamic": shape-agnostic; one instance serves every shape;
//   - "cpu_ref_static":  built for one set of layouts (checked on execution),
//     kept in the impl cache like a device's specialised kernel.
// Both run the same math; the static flavour lets the host device exercise every
// path of the flow (impl cache, static builds, background hand-over).
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/implementation_map.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// Host view of one execution. Shapes and dtypes come from the params; an input
// or output is mapped to a host pointer only on its first data access (in(),
// out(), in_raw(), out_raw(), get(), set(), get_ints()), so a kernel that reads
// only shapes (shape_of) maps no input and never waits for device work that
// produces it. Mappings are released when the HostCall is destroyed.
class HostCall {
public:
    HostCall(ExecContext& ctx);
    ~HostCall();
    HostCall(const HostCall&) = delete;
    HostCall& operator=(const HostCall&) = delete;

    const KernelParams& params() const { return ctx_.params; }
    const Attributes& attrs() const { return *ctx_.params.attrs; }
    const std::string& node() const { return ctx_.params.node; }
    size_t num_inputs() const { return in_shapes_.size(); }
    size_t num_outputs() const { return out_shapes_.size(); }
    const Shape& in_shape(size_t i) const { return in_shapes_.at(i); }
    const Shape& out_shape(size_t i) const { return out_shapes_.at(i); }
    DataType in_type(size_t i) const { return ctx_.params.inputs.at(i).dtype; }
    DataType out_type(size_t i) const { return ctx_.params.outputs.at(i).dtype; }

    // Host pointers (nullptr for an absent optional input or output).
    template <typename T>
    const T* in(size_t i) const {
        return static_cast<const T*>(in_raw(i));
    }
    template <typename T>
    T* out(size_t i) const {
        return static_cast<T*>(out_raw(i));
    }
    const void* in_raw(size_t i) const {
        if (i < in_ptrs_.size() && in_ptrs_[i]) return in_ptrs_[i];
        return map_input(i);
    }
    void* out_raw(size_t i) const {
        if (i < out_ptrs_.size() && out_ptrs_[i]) return out_ptrs_[i];
        return map_output(i);
    }

    // Element access through double for any dtype (f16 decoded; integers exact up
    // to 2^53). The reference math of most ops is written with these.
    double get(size_t input, size_t flat_index) const;
    void set(size_t output, size_t flat_index, double value) const;
    // Integer values of an input (for index / shape inputs).
    std::vector<int64_t> get_ints(size_t input) const;

    // Ops with a data-dependent output (OpTraits::data_dependent_output): the
    // actual shape of output i, known once the kernel has computed it. out_shape()
    // is the bound the buffer was sized for; write at most that many elements.
    void set_output_shape(size_t output, const Shape& shape);

private:
    // First access: maps the memory (or returns nullptr when it is absent).
    const void* map_input(size_t i) const;
    void* map_output(size_t i) const;

    ExecContext& ctx_;
    std::vector<Shape> in_shapes_, out_shapes_;
    std::vector<size_t> out_offsets_;   // bytes from the buffer's start (dense block in padding)
    mutable std::vector<const void*> in_ptrs_;
    mutable std::vector<void*> out_ptrs_;
    mutable std::vector<std::unique_ptr<MappedMemory>> maps_;
};

using HostKernel = std::function<void(HostCall&)>;

struct HostImplOptions {
    std::vector<DataType> dtypes;   // empty = any
    // The impls' names: "cpu_<name>_dynamic", "cpu_<name>_static". The
    // reference impls ("ref") are the oracle and the last resort; other host
    // impls (optimised loops, optimised_host_options()) rank as device impls.
    std::string name = "ref";
    bool reference = true;
    bool register_static = true;
    bool register_dynamic = true;
    // Extra check (empty string = ok), e.g. unsupported attribute combinations.
    std::function<std::string(const KernelParams&)> validate;
    // Weightable ops: the format the *static* flavour reads its weights in
    // (ImplEntry::weights_format). HostCall::get() reads blocked inputs through
    // storage_index(), so a kernel written with get() needs no change; it lets
    // the host device exercise the weights reorder a device's tuned kernels take.
    Format static_weights_format = Format::plain;
    // Rows tile for ops with a fake_align hook (ImplEntry::fake_align_rows).
    size_t fake_align_rows = 0;
};

// True when `l` is padded along at most one axis and its logical elements still
// form one dense block inside the padded buffer (every dim before that axis has
// extent 1), so a kernel can address it as a dense tensor starting `*offset`
// elements in. Host impls accept such outputs: that is how a producer writes
// straight into an in-place concat's buffer.
bool dense_block_in_padding(const Layout& l, size_t* offset = nullptr);

// Runs the params' fused post-ops (KernelParams::fused_ops) one after another
// in place on output 0, each through its own host impl: each is elementwise
// through its main input (OpTraits::fusable), so reading and writing one buffer
// is safe. For host impls that take fused ops (ImplEntry::fused_ops) and do not
// apply them in their own loops.
void apply_fused_host_ops(ExecContext& ctx);

// Options of an optimised host impl next to the reference: "cpu_opt_dynamic" and
// "cpu_opt_static", ranked above the reference; `validate` says what the fast
// loops do not cover (the reference serves it).
HostImplOptions optimised_host_options(std::vector<DataType> dtypes,
                                       std::function<std::string(const KernelParams&)> validate = {});

// Registers the cpu reference impls of `op` (dynamic first, then static). Both
// apply fused post-ops (KernelParams::fused_ops) after the kernel: each fused
// op's own host impl runs in place on the output.
void add_host_impls(ModuleRegistrar& reg, const std::string& op, HostKernel kernel, HostImplOptions options = {});

// Host impl options for the given dtypes (and an optional extra check).
inline HostImplOptions host_options(std::vector<DataType> dtypes,
                                    std::function<std::string(const KernelParams&)> validate = {}) {
    HostImplOptions o;
    o.dtypes = std::move(dtypes);
    o.validate = std::move(validate);
    return o;
}

// Work of a memory-bound execution: no FLOPs, every input and output moved once.
OpCost io_bytes_cost(const std::vector<Layout>& inputs, const std::vector<Layout>& outputs);

// ---- shape-inference utilities -------------------------------------------

// Normalised value of the Int attribute `name` (an axis) against `rank`.
size_t axis_attr(const Attributes& attrs, size_t rank, const std::string& name = "axis");
// Product of the dims [begin, end) of a static shape (1 for an empty range).
size_t dims_product(const Shape& s, size_t begin, size_t end);
// "[a,b,...]" for error messages.
std::string ints_to_string(const std::vector<int64_t>& v);
// Index of `mode` in `modes` (a mode attribute's values, in the order of the
// op's enum); throws "unknown <op> mode '<mode>'" naming the field "mode".
size_t mode_index(const std::string& op, const std::vector<std::string>& modes, const std::string& mode);
// An Error whose context names the attribute `field`.
Error attr_error(const std::string& field, const std::string& message);

// ---- 2-D spatial windows (convolution-like ops) ---------------------------

// Window attributes, one value per spatial axis (H, W).
struct WindowAttrs {
    std::vector<int64_t> strides, pads_begin, pads_end, dilations;
    std::vector<int64_t> output_padding;   // transposed windows only
    int64_t groups = 1;
};

// Docs of the window attributes (they differ between direct and transposed windows).
struct WindowAttrDocs {
    std::string strides, pads_begin, pads_end, groups;
    bool output_padding = false;   // declare output_padding (transposed windows)
};

// Attribute schema: strides, pads_begin, pads_end, dilations, [output_padding,] groups.
std::vector<AttrSpec> window_attrs(const WindowAttrDocs& docs);
// Reads and checks the attributes declared by window_attrs(); `op` prefixes
// the error messages. With `output_padding`, it must be below max(stride,
// dilation) per axis.
WindowAttrs read_window_attrs(const Attributes& a, const std::string& op, bool output_padding = false);

// Normalises a possibly negative axis against `rank`; throws naming `field`.
int64_t normalize_axis(int64_t axis, int64_t rank, const std::string& field = "axis");
// Numpy broadcasting of two partial shapes; throws on incompatible static dims.
PartialShape broadcast_shapes(const PartialShape& a, const PartialShape& b);
// Numpy broadcasting of `shapes` (at least one), folded left to right through
// broadcast_shapes, keeping bounds: where broadcast_shapes can only answer
// "dynamic" (two dynamic dims), the result is one of the two dims, so it gets
// their joint bounds.
PartialShape broadcast_shapes_bounded(const std::vector<PartialShape>& shapes);
// Shape inference of a broadcasting elementwise op: broadcast_shapes_bounded,
// and the known dims of the result (lower bounds of dynamic ones) must fit an
// element count. `described` names the inputs with their shapes ("a [2,3] and
// b [3]"); the errors carry `where`: "inputs <described> cannot be broadcast
// (<reason>)" and "the broadcast shape <out> of <described> has more than 2^60
// elements".
PartialShape broadcast_inputs(const std::vector<PartialShape>& shapes, const std::string& described,
                              const ErrorContext& where);
// An impl's validate for device kernels that split output indices over 8
// right-aligned dims (the OpenCL broadcast helpers, BCAST_* in
// dynrt/ocl_common.cl): a reason when output 0's rank is above 8.
std::string validate_broadcast_rank(const KernelParams& p);
// The context of an error in shape inference of node `node` of op `op`.
ErrorContext node_context(const std::string& node, const std::string& op, const std::string& field);

// Host kernels of broadcasting ops: walks the output elements in row-major
// order keeping, for each input, the flat index of the element the current
// output element reads (numpy broadcasting: an input's size-1 and missing
// leading dims are held at 0). Stepping is incremental, no division per
// element:
//   BroadcastIndex ix(out, {call.in_shape(0), call.in_shape(1)});
//   for (size_t o = 0; o < out.count(); ++o, ix.next()) y[o] = f(a[ix.in(0)], b[ix.in(1)]);
class BroadcastIndex {
public:
    BroadcastIndex(const Shape& out, const std::vector<Shape>& inputs);
    // Flat index into input i of the current output element.
    size_t in(size_t i) const { return index_[i]; }
    // Moves to the next output element (after the last one, back to the first).
    void next() {
        const size_t n = index_.size();
        for (size_t d = extent_.size(); d-- > 0;) {
            if (++coord_[d] < extent_[d]) {
                for (size_t i = 0; i < n; ++i) index_[i] += step_[d * n + i];
                return;
            }
            coord_[d] = 0;
            for (size_t i = 0; i < n; ++i) index_[i] -= rewind_[d * n + i];
        }
    }

private:
    std::vector<size_t> extent_, coord_;   // output dims and the current coordinates
    std::vector<size_t> step_, rewind_;    // per dim and input: stride (0 if broadcast), stride * (extent - 1)
    std::vector<size_t> index_;            // per input
};
// Row-major strides of a static shape (in elements).
std::vector<size_t> strides_of(const Shape& s);
// Throws dynrt::Error{"<what>: expected <n> dims, got <shape>"} unless rank matches.
void expect_rank(const Layout& l, size_t rank, const std::string& what);

}   // namespace dynrt
