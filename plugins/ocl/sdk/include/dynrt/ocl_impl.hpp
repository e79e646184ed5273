// OpenCL impls for op modules: one or several kernels per execution, static and
// shape-agnostic, stateless and shared.
//
// An op describes its kernels and calls add_ocl_impls() (one kernel, the common
// case: OclKernelSpec) or add_ocl_multi_impls() (several kernels, scratch
// buffers: OclMultiKernelSpec). Both register:
//   - "ocl_dynamic": shape-agnostic. Built once per primitive with every tensor's
//     dims read from shape_info (IS_DYNAMIC 1); when the runtime layouts change
//     shape_info is repacked (written only when it changed, ordered on the
//     stream's queue) and each stage's dispatch recomputed
//     (update_dispatch_data); a stage with an empty dispatch is skipped.
//   - "ocl_static": built for one set of layouts with every dim a JIT constant
//     (IS_DYNAMIC 0), kept in the impl cache.
// Every kernel is built from dynrt/ocl_common.cl (KERNEL, CAT, LOAD/STORE by
// DATA_F16, LOAD4/STORE4, FLOAT_ACC, the fused post-op defaults) followed by
// the op's source.
//
// The rule for shared impls: an impl object is shared by every infer request
// of a network (the impl cache) and may execute on several threads at once, so
// execute() keeps no per-run state in the impl. Everything derived from a run
// (last layouts, dispatch, scalars, packed shape_info, the shape_info region,
// the argument vector) lives in the ImplState that create_state() returns and
// the flow hands back in ExecContext::state. Without a state (a caller that
// does not keep one) execute() uses a local one: correct, but it repacks and
// rewrites shape_info every run. Scratch buffers come from ExecContext::scratch,
// sized by scratch_bytes(); without them the state allocates its own.
//
// Data-dependent outputs (ops with OpTraits::data_dependent_output: nonzero,
// topk with k as data, unique): shape inference gives an upper bound and the
// outputs are sized for it; the kernels then tell the host what they actually
// wrote. A spec that sets `report_ints` gets a small device buffer of that many
// ints per request (the state's), bound to a stage with OclArgRef::report()
// (an OclKernelSpec's kernel takes it as `__global int* report` right after
// its outputs). The buffer holds zeros when the first stage starts (every run
// writes them, so a stage skipped for an empty dispatch leaves zeros, never a
// previous run's values), the kernels write counts or dims into it, and after
// the last stage the impl reads it back (one small blocking read, only for
// such specs) and calls `report_shapes`, which turns the values into the
// actual shape of every output. Those go to ExecContext::actual_outputs; a
// shape with more elements than the output's bound (its runtime layout), or
// more bytes than its buffer, is refused with an error naming both, as is a
// report on an op that does not declare data_dependent_output.
//
// Checks of data (an index out of range) on ops with static output shapes use
// the same buffer through `report_check` instead of (or besides)
// `report_shapes`: the kernels write an error flag and the offending value
// (0 meaning "no error": a skipped stage leaves zeros), and after the run
// report_check throws a dynrt::Error naming the node, the input and the value
// where the report says so. Such an op does not declare data_dependent_output
// and its output shapes stay as inferred; the price is the same blocking
// read-back on every run, so only checks the host impls also make (the error
// must not depend on the device) belong there.
//
// Kernel signature convention, in this order:
//   KERNEL(name)(OPTIONAL_SHAPE_INFO_ARG <the stage's args, OclStage::args>)
// by default
//   KERNEL(name)(OPTIONAL_SHAPE_INFO_ARG
//                __global const INPUT0_TYPE* input0, ..., __global OUTPUT0_TYPE* output0, ...
//                FUSED_OPS_ARGS, <scalars>)
// with INPUTk_* / OUTPUTk_* constants from tensor_jit_defines (TYPE, RANK,
// DIM0..DIM7 right-aligned, LENGTH). Optional inputs that are absent get
// INPUTk_PRESENT 0 and no argument.
#pragma once

#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/ocl_api.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// One kernel: the single-kernel description most ops use.
struct OclKernelSpec {
    const char* source = nullptr;   // OpenCL C 1.2 (embedded .cl)
    std::string kernel_name;
    // Op-specific JIT constants (attributes, modes). For the dynamic build the
    // params' dims must not be baked in: only dtypes, ranks and attributes.
    std::function<JitDefines(const KernelParams&, bool is_dynamic)> defines;
    // update_dispatch_data: work sizes for the current (runtime) layouts. A
    // dispatch with a zero global size skips the kernel.
    std::function<OclDispatch(const KernelParams&, const OclDeviceLimits&)> dispatch;
    // Scalars appended after the tensors (optional), from the runtime layouts.
    std::function<std::vector<OclArg>(const KernelParams&)> scalars;
    // The kernel applies fused post-ops (FUSED_OPS_ARGS after the outputs,
    // FUSED_OPS before each store: dynrt/ocl_fused_ops.hpp); the impls
    // then take KernelParams::fused_ops (ImplEntry::fused_ops).
    bool fused_ops = false;
    // The kernel stores through OUTPUT<k>_PHYS(i) (dynrt/ocl_api.hpp), so its
    // outputs may be padded: a view into a larger buffer, e.g. a slice of an
    // in-place concat's output. Inputs are always dense.
    bool padded_outputs = false;
    // Data-dependent outputs (see the top of this file): ints the kernel
    // reports (0: none) and the actual output shapes they give.
    size_t report_ints = 0;
    std::function<std::vector<Shape>(const KernelParams&, const std::vector<int32_t>& report)> report_shapes;
    // Checks of data (see the top of this file): throws a dynrt::Error when
    // the values the kernel reported say that its input was bad.
    std::function<void(const KernelParams&, const std::vector<int32_t>& report)> report_check;
};

// Where one kernel argument comes from on every run (after shape_info).
struct OclArgRef {
    enum class Kind : uint8_t { input, output, scratch, inputs, outputs, fused_inputs, scalars, report };
    Kind kind = Kind::inputs;
    size_t index = 0;
    static OclArgRef input(size_t i) { return {Kind::input, i}; }
    static OclArgRef output(size_t i) { return {Kind::output, i}; }
    static OclArgRef scratch(size_t i) { return {Kind::scratch, i}; }   // ExecContext::scratch[i]
    static OclArgRef inputs() { return {Kind::inputs, 0}; }             // every input, in order
    static OclArgRef outputs() { return {Kind::outputs, 0}; }
    static OclArgRef fused_inputs() { return {Kind::fused_inputs, 0}; }   // fused ops' other inputs (if any)
    static OclArgRef scalars() { return {Kind::scalars, 0}; }             // OclStageRun::scalars
    static OclArgRef report() { return {Kind::report, 0}; }               // the report buffer (report_ints)
};

// One kernel of a multi-kernel impl, fixed when the impl is created.
struct OclStage {
    std::string kernel_name;   // entry point in the spec's source
    std::vector<OclArgRef> args{OclArgRef::inputs(), OclArgRef::outputs(), OclArgRef::fused_inputs(),
                                OclArgRef::scalars()};
};

// What update_dispatch_data gives one stage for the runtime layouts. The
// vectors are reused from run to run: clear() and refill them.
struct OclStageRun {
    OclDispatch dispatch;          // a zero global size skips the stage on this run
    std::vector<OclArg> scalars;   // scalar arguments (no memory/buffer kinds)
};

// Several kernels run one after another on the stream (in stage order), e.g. a
// split reduction: partial results into a scratch buffer, then a final pass.
struct OclMultiKernelSpec {
    const char* source = nullptr;   // OpenCL C 1.2 holding every stage's entry point
    std::function<JitDefines(const KernelParams&, bool is_dynamic)> defines;
    // The stages built for `p` (once, when the impl is created: a static impl
    // may build only the kernels its shapes need).
    std::function<std::vector<OclStage>(const KernelParams& p, bool is_dynamic)> stages;
    // update_dispatch_data, called only when the runtime layouts change:
    // fill `runs` (one per stage, already sized) for `p`.
    std::function<void(const KernelParams& p, const OclDeviceLimits&, std::vector<OclStageRun>& runs)> update;
    // Scratch buffers in bytes for the runtime layouts (Impl::scratch_bytes),
    // bound with OclArgRef::scratch(i). Empty function: none.
    std::function<std::vector<size_t>(const KernelParams&)> scratch_bytes;
    // The layout the shape-agnostic build compiles input `i` for. Default:
    // every dim dynamic. An op may keep dims it knows are the same on every
    // run (KernelParams::node_inputs) as literals.
    std::function<Layout(const KernelParams&, size_t i)> dynamic_input;
    bool fused_ops = false;        // as OclKernelSpec::fused_ops
    bool padded_outputs = false;   // as OclKernelSpec::padded_outputs
    // Data-dependent outputs (see the top of this file): the int32 entries of
    // the report buffer the stages bind with OclArgRef::report() (0: none),
    // and the actual shape of every output, in output order, from the values
    // the kernels wrote (called after every run; `report` has report_ints
    // entries). report_ints goes with report_shapes, report_check or both.
    size_t report_ints = 0;
    std::function<std::vector<Shape>(const KernelParams& p, const std::vector<int32_t>& report)> report_shapes;
    // Checks of data (see the top of this file), called after every run before
    // report_shapes: throws a dynrt::Error naming the node, the input and the
    // value when the report holds an error.
    std::function<void(const KernelParams& p, const std::vector<int32_t>& report)> report_check;
};

struct OclImplOptions {
    std::vector<DataType> dtypes;   // empty = any
    // Formats of the tensors the kernels read and write (ImplEntry::formats).
    // Plain unless the kernel indexes a blocked layout itself; weights_format
    // is added when it is not plain. Never empty: a blocked tensor must get a
    // reorder (or a clear refusal), not a kernel that reads it as plain.
    std::vector<Format> formats{Format::plain};
    bool register_static = true;
    bool register_dynamic = true;
    // Extra check (empty string = ok).
    std::function<std::string(const KernelParams&)> validate;
    // Weightable ops: the format the kernel reads the weights in
    // (ImplEntry::weights_format; the flow reorders constant weights into it).
    Format weights_format = Format::plain;
    size_t fake_align_rows = 0;   // ImplEntry::fake_align_rows
};

void add_ocl_impls(ModuleRegistrar& reg, const std::string& op, OclKernelSpec spec, OclImplOptions options = {});
void add_ocl_multi_impls(ModuleRegistrar& reg, const std::string& op, OclMultiKernelSpec spec,
                         OclImplOptions options = {});
// The impl add_ocl_multi_impls registers, made directly (tests, benchmarks).
std::unique_ptr<Impl> create_ocl_impl(const KernelParams& p, const OclMultiKernelSpec& spec, bool dynamic,
                                      Format weights_format = Format::plain);
// The one-stage multi-kernel spec of a single-kernel spec.
OclMultiKernelSpec to_multi_kernel_spec(OclKernelSpec spec);

// Dispatch over `n` work items in one dimension (rounded up to the local size).
OclDispatch dispatch_1d(size_t n, const OclDeviceLimits& limits);
// Dispatch over a 2-D or 3-D grid of work items.
OclDispatch dispatch_nd(std::array<size_t, 3> work, size_t dims, const OclDeviceLimits& limits);
// Dispatch for a grid-stride kernel over `n` items (`for (i = get_global_id(0);
// i < n; i += get_global_size(0))`). On a GPU at most compute_units x local
// size x 8 work-items (a full wave of resident threads), fewer when `n` is
// smaller, so each work-item moves several items and consecutive work-items
// stay on consecutive items (coalesced). On a CPU device one work-item per
// item (a strided walk per work-item would defeat the caches there). Memory-
// bound kernels use it with 4-element vectors as items.
OclDispatch dispatch_grid_stride(size_t n, const OclDeviceLimits& limits);
// True when the dispatch launches nothing (a zero global size).
inline bool dispatch_empty(const OclDispatch& d) { return d.gws[0] == 0 || d.gws[1] == 0 || d.gws[2] == 0; }

// OpenCL impl options for the given dtypes (and an optional extra check).
inline OclImplOptions ocl_options(std::vector<DataType> dtypes,
                                  std::function<std::string(const KernelParams&)> validate = {}) {
    OclImplOptions o;
    o.dtypes = std::move(dtypes);
    o.validate = std::move(validate);
    return o;
}

// Unsigned OpenCL type of an element's width: for kernels that move bits, not values.
const char* ocl_bits_type(DataType t);
// Check for kernels that take only `dtype` inputs and index with int: an error
// string when an input has another type or a static tensor has more than
// 2^31-1 elements (counted in storage with `storage`, else logical).
std::string check_dtype_and_int_range(const KernelParams& p, DataType dtype, bool storage);
// STRIDE_H/W, PAD_H/W (pads_begin), DILATION_H/W and GROUPS of a 2-D window.
JitDefines jit_window_defines(const WindowAttrs& a);
// Lines along `axis` of tensor `prefix` (INPUT0 ...) of rank `rank`:
// AXIS_LEN, INNER and OUTER_INNER (the number of lines).
JitDefines jit_axis_lines(const std::string& prefix, size_t rank, size_t axis);
// One work-item per line along `axis` of `s`; none when the axis is empty.
OclDispatch dispatch_lines(const Shape& s, size_t axis, const OclDeviceLimits& limits);
// Grid-stride over the 4-element vectors of `n` elements, at least one
// work-item per tail element (none for n == 0).
OclDispatch dispatch_vec4(size_t n, const OclDeviceLimits& limits);

// The shared device-side helpers (dynrt/ocl_common.cl) the SDK puts ahead of
// every kernel source it builds.
const char* ocl_common_source();
// ocl_common_source(), then `source` numbered from line 1 again.
std::string ocl_full_source(const char* source);

}   // namespace dynrt
