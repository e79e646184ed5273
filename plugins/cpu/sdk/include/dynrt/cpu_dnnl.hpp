// cpu impls on oneDNN primitives: static and shape-agnostic.
//
// An op describes how its params make a oneDNN primitive (DnnlSpec::plan) and
// add_dnnl_impls() registers, next to its reference impls:
//   - "cpu_<name>_static": the primitive built once for one set of layouts,
//     kept in the impl cache like any static impl (with a shape-agnostic
//     plan: that plan, so the two impls share one kernel and give the same
//     bits);
//   - "cpu_<name>_dynamic": one impl for every shape. With a shape-agnostic
//     plan (oneDNN runtime dims: matmul) one primitive serves every run and
//     only the memory descriptors follow the runtime layouts; otherwise the
//     request's state rebuilds the plan when the layouts change, which
//     oneDNN's primitive cache makes cheap for a shape seen before.
// Both run on the engine's threads (dynrt/cpu_parallel.hpp), with a scratchpad
// and staged copies in a block of the calling thread's that every oneDNN impl
// run on that thread shares (the primitives stay immutable and shared by
// every request). Fused ops run inside the primitive as oneDNN post-ops where
// each has one (OpDefinition::post_op) and oneDNN takes its operand's
// broadcast (dnnl_plan_with_post_ops); else the fused ops' host impls apply
// them to the output after the primitive.
// Outputs may be padded (a producer writing its slice of an in-place concat,
// dynrt/cpu_padded.hpp): one whose elements form a dense block inside the
// padding is bound at its offset under the plan of the dense layout (the
// plan, and a shape-agnostic plan, stay as they are when only the offset
// moves); other paddings only where the op's plan takes the output's strides
// at run time (DnnlSpec::padded_outputs): one plan while only the padding
// changes, a memory object of each run's strides.
// What oneDNN cannot take (a dtype, a padded input or blocked tensor, an
// attribute combination) is refused by validate() with the reason, and the
// reference impl serves it: `-v` and `dynrt ops` show the reason.
#pragma once

#include <oneapi/dnnl/dnnl.hpp>

#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/registry.hpp"

namespace dynrt {

// Which run buffer a primitive argument is bound to.
struct DnnlArgRef {
    int arg = 0;           // DNNL_ARG_SRC, DNNL_ARG_WEIGHTS, ...
    bool output = false;   // an output of the node, else an input
    size_t index = 0;
    bool fused = false;   // an extra input of the fused ops (ExecContext::fused_inputs)
};

// A primitive argument held in a layout of oneDNN's choosing (a primitive
// descriptor made with format `any`, e.g. a blocked convolution): the run's
// plain buffer is reordered into a copy before the primitive (an input) or
// out of it after (an output); the copy lives in the calling thread's run
// block only while the impl runs. Constant weights
// (KernelParams::constant_weights) are reordered once per weights buffer
// instead, into a copy the op's dynamic and static impls share with every
// request. Plans of static layouts only.
struct DnnlStaged {
    size_t arg = 0;             // index into DnnlPlan::args
    dnnl::memory::desc inner;   // the primitive's layout of it
    dnnl::reorder reorder;      // plain -> inner (input) or inner -> plain (output)
    bool constant = false;      // the node's constant weights
    // f32 whose inner layout only moves dim 1 last ([N, C, S...] held as
    // [N, S..., C], oneDNN's channels-last activations): the SDK's own
    // transposes of N matrices of C x S (S the spatial elements) move it,
    // not `reorder` (about 3x faster).
    bool channels_last = false;
    size_t batches = 0, channels = 0, spatial = 0;
};

// One primitive and how a run binds it.
struct DnnlPlan {
    dnnl::primitive primitive;
    std::vector<DnnlArgRef> args;
    // The memory descriptor of each arg (in args order) for the layouts the
    // plan was built for; a shape-agnostic plan gets them per run from
    // DnnlSpec::runtime_descs instead.
    std::vector<dnnl::memory::desc> descs;
    // Arguments bound to memory the plan owns (e.g. a constant scale).
    std::vector<std::pair<int, dnnl::memory>> fixed;
    // Arguments the primitive takes in its own layouts (dnnl_stage_args).
    std::vector<DnnlStaged> staged;
    size_t scratchpad_bytes = 0;   // from the primitive descriptor (user scratchpad)
    // The primitive applies every fused op (post-ops); else none, and the
    // fused ops' host impls run after it.
    bool fused_ops_applied = false;
    // The post-ops dnnl_plan_with_post_ops made it for, kept or not: the
    // fused ops of another run with these post-ops get the same plan.
    bool post_ops_considered = false;
    bool post_ops_expressible = false;
    std::vector<dnnl::memory::desc> post_op_descs;
};

// A node's fused ops as oneDNN post-ops: all of them, or none (applied false).
struct DnnlPostOps {
    bool applied = false;
    dnnl::post_ops ops;
    std::vector<DnnlArgRef> args;            // the binary post-ops' operands
    std::vector<dnnl::memory::desc> descs;   // their descriptors, in args order
};

struct DnnlSpec {
    std::string name = "dnnl";   // impl names cpu_<name>_static / cpu_<name>_dynamic
    std::vector<DataType> dtypes{DataType::f32};
    // Empty string: oneDNN can run these params; otherwise why not.
    std::function<std::string(const KernelParams&)> validate;
    // The plan for these (static) layouts.
    std::function<DnnlPlan(const KernelParams&)> plan;
    // Optional: a plan that serves every shape of the node (runtime dims),
    // built once from the node's params (none: this node's shapes need a plan
    // per shape), and the descriptors of each run (in the plan's args order;
    // a strided output's with the run's strides: padded_outputs).
    std::function<std::optional<DnnlPlan>(const KernelParams&)> shape_agnostic_plan;
    std::function<std::vector<dnnl::memory::desc>(const KernelParams&)> runtime_descs;
    // Optional, with a shape-agnostic plan: false for a run the plan made from
    // the node's params cannot serve (then a plan of the run's shapes serves
    // it); none: every run.
    std::function<bool(const KernelParams&)> shape_agnostic_serves;
    // Output 0 may be padded in a way that is no dense block: `plan` then
    // gives its descriptor runtime strides (DNNL_RUNTIME_DIM_VAL, innermost
    // 1) and `runtime_descs` the run's (padded_strides, dynrt/cpu_padded.hpp);
    // the output is bound at its first element. A run whose padding alone
    // changed (an in-place concat that grew) keeps the plan. Without it only
    // dense blocks in the padding are taken, under the plan of the dense
    // layout: the plans never see a dense block's padding. Padded outputs
    // with fused ops are refused either way.
    bool padded_outputs = false;
    bool register_static = true;
    bool register_dynamic = true;
};

void add_dnnl_impls(ModuleRegistrar& reg, const std::string& op, DnnlSpec spec);

// The process's oneDNN cpu engine (host memory, as the cpu engine's buffers).
const dnnl::engine& dnnl_cpu_engine();
// Attributes every plan starts from: a user scratchpad (the request's) and
// the post-ops.
dnnl::primitive_attr dnnl_attr(const DnnlPostOps& post = {});
// The fused ops of `p` as post-ops of a primitive whose output is `dst`:
// not applied where one has no post-op, is not f32, or has an operand that
// does not broadcast into dst (a runtime dim of dst takes operands of 1 there;
// a dst that merges the output's leading dims takes operands that are 1
// there or the output's whole shape).
DnnlPostOps dnnl_post_ops(const KernelParams& p, const dnnl::memory::desc& dst);
// make(post-ops of the node's fused ops) when they apply and oneDNN creates
// the primitive with them; else make({}) (the host impls apply them).
DnnlPlan dnnl_plan_with_post_ops(const KernelParams& p, const dnnl::memory::desc& dst,
                                 const std::function<DnnlPlan(const DnnlPostOps&)>& make);
dnnl::memory::data_type dnnl_type(DataType t);
// A dense row-major descriptor of `dims` (int64 dims; an empty list is a scalar [1]).
dnnl::memory::desc dnnl_plain_desc(const std::vector<int64_t>& dims, DataType t);
// A plan of `primitive`, made from a primitive descriptor whose scratchpad
// is `scratchpad` (pd.scratchpad_desc()) and whose attributes hold `post`
// (its operands are bound after `args`).
DnnlPlan dnnl_plan(dnnl::primitive primitive, const dnnl::memory::desc& scratchpad, std::vector<DnnlArgRef> args,
                   std::vector<dnnl::memory::desc> descs, const DnnlPostOps& post = {});
// Stages every argument of `plan` whose descriptor in the primitive
// (`inner`, in args order: what the primitive descriptor reports for each
// arg) differs from the plain one the run binds (plan.descs): a reorder into
// the primitive's layout before it runs for inputs, out of it after for
// outputs; once per weights buffer for the weights input of `p` where they
// are constant. Returns the plan.
// dnnl_impl_info names an argument that moves by transposes (DnnlStaged::
// channels_last) with "(transposed)".
DnnlPlan dnnl_stage_args(DnnlPlan plan, const std::vector<dnnl::memory::desc>& inner, const KernelParams& p);
// What a oneDNN impl of this SDK runs, for `-v`-style reports and tests:
// oneDNN's impl string of its plan ("brgconv:avx512_core"), then
// " staged <arg>..." naming the arguments it reorders into the primitive's
// layouts (dnnl_stage_args; "src", "weights", "dst", else the DNNL_ARG
// number; "weights(once)" for constant weights). Empty for an impl that is not one, or that keeps no plan of its
// own (a dynamic impl planning per request).
std::string dnnl_impl_info(const Impl& impl);
// Empty when every input and output is plain and unpadded (what the plans
// bind), else the reason.
std::string dnnl_check_dense(const KernelParams& p);

}   // namespace dynrt
