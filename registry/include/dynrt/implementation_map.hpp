// implementation_map: the ordered list of implementations of each op.
//
// An ImplEntry says which device it runs on (impl type), whether it is static
// (built for one set of layouts) or dynamic (shape-agnostic: one instance serves
// every shape), which data types and formats it takes, a validate() that returns
// an empty string when it can serve the given params or the reason it cannot, and
// create(). Per op the list is ordered by priority; the first entry that validates
// wins and the host reference impl is last. Impl objects are immutable after
// create() and may be executed by several infer requests at once.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/layout.hpp"
#include "dynrt/memory.hpp"

namespace dynrt {

struct OpDefinition;

enum class ShapeType { static_shape, dynamic_shape };
const char* to_string(ShapeType t);   // "static", "dynamic"

class Impl;

// One elementwise op fused into a primitive (a post-op): the primitive's impl
// applies it to its result before storing (docs/architecture.md, "Fusion").
// Fused ops apply in order; each takes the running result as input
// `main_input` and its other inputs from ExecContext::fused_inputs (in order,
// fused op by fused op). Its output has the running result's layout.
struct FusedOpDesc {
    std::string node;   // the fused node's name
    const OpDefinition* op = nullptr;
    const Attributes* attrs = nullptr;
    std::vector<Layout> inputs;   // all inputs of the fused op, runtime layouts
    size_t main_input = 0;        // which of them is the running result
    Layout output;
    // The fused op's own shape-agnostic host impl (set by the flow): host impls
    // run it in place on their output; device impls generate code from op/attrs.
    std::shared_ptr<Impl> host_impl;
};

// kernel_impl_params: everything an impl may depend on for one execution.
struct KernelParams {
    std::string node;
    const OpDefinition* op = nullptr;
    const Attributes* attrs = nullptr;
    std::vector<Layout> inputs;
    std::vector<Layout> outputs;
    Engine* engine = nullptr;
    // Post-ops fused into this primitive (empty = none); part of the impl-cache key.
    std::vector<FusedOpDesc> fused_ops;
    // The node's input layouts as the program inferred them (partial), when
    // known: a dim static there has that value on every run, so a
    // shape-agnostic impl (created once per node) may compile it in as a
    // literal. Null when unknown (then every dim is taken as dynamic).
    std::shared_ptr<const std::vector<Layout>> node_inputs;
    // Input OpDefinition::weights_input is a constant of the network: its data
    // never changes, so an impl may derive data from it once (the weights in a
    // layout of its own) and reuse that while the same buffer is bound. Part
    // of the impl-cache key.
    bool constant_weights = false;
};

// Per-request state of one impl: what an impl derives from a run and reuses on
// the next (dispatch, packed shape_info, argument lists, its shape_info buffer).
// An impl is shared by every request of a network (through the impl cache) and
// may execute on several threads at once, so it keeps no per-run state in
// itself: Impl::create_state() makes one of these, the PrimitiveInst that runs
// the impl owns it (one per request and node) and hands it back in
// ExecContext::state on every execution of that impl.
class ImplState {
public:
    virtual ~ImplState();
};

struct ExecContext {
    Stream& stream;
    const KernelParams& params;             // current layouts
    const std::vector<MemoryPtr>& inputs;   // views with the current layouts
    const std::vector<MemoryPtr>& outputs;
    // Ops with data-dependent output shapes write the actual output layouts here
    // (the outputs were allocated for the upper bound their shape inference gave).
    std::vector<Layout>* actual_outputs = nullptr;
    // Extra (non-main) inputs of params.fused_ops, fused op by fused op.
    const std::vector<MemoryPtr>* fused_inputs = nullptr;
    // This request's state for this impl (Impl::create_state(); null when the
    // impl made none).
    ImplState* state = nullptr;
    // Scratch buffers, one per entry of Impl::scratch_bytes(params), each at
    // least that many bytes on the impl's engine; their content is undefined
    // at the start of every execution. Null when the impl asks for none.
    const std::vector<MemoryPtr>* scratch = nullptr;
};

class Impl {
public:
    virtual ~Impl();
    virtual void execute(ExecContext& ctx) = 0;
    virtual std::string name() const = 0;   // e.g. "cumsum_ref"
    virtual bool is_dynamic() const = 0;
    // A dynamic impl that runs every shape of its node as fast as a static
    // impl built for it would (one kernel for all shapes, e.g. oneDNN's
    // runtime-dims matmul): the flow builds no static impls beside it.
    virtual bool static_builds_redundant() const { return false; }
    // Weightable ops (OpDefinition::weights_input): the format this impl reads
    // its weights in (ImplEntry::weights_format of the entry that created it).
    virtual Format weights_format() const { return Format::plain; }
    // A fresh per-request state (see ImplState); called by the flow each time
    // a request's node switches to this impl. Default: none.
    virtual std::unique_ptr<ImplState> create_state() const { return nullptr; }
    // Scratch memory (OpenVINO's internal buffers) for the given runtime
    // layouts, in bytes per buffer: split reductions, partial sums, workspaces.
    // The flow calls it when the shape or the impl changed, grows the
    // request's scratch buffers to fit (through the memory pool) and passes
    // them in ExecContext::scratch. Default: none.
    virtual std::vector<size_t> scratch_bytes(const KernelParams& /*params*/) const { return {}; }
};
using ImplPtr = std::shared_ptr<Impl>;

// Impl priority (ImplEntry::priority): higher is tried first. An entry left
// at kPriorityDefault gets the default of its kind, which gives the documented
// order device static > device dynamic > host reference (docs/architecture.md,
// "Impl priority"). Ties go by impl name, then module name: which module was
// loaded first, or what its file is called, never decides anything.
inline constexpr int kPriorityDefault = -1;
inline constexpr int kPriorityDeviceStatic = 300;
inline constexpr int kPriorityDeviceDynamic = 200;
inline constexpr int kPriorityReference = 100;

struct ImplEntry {
    std::string name;   // unique per op, e.g. "cpu_ref_dynamic"
    // See kPriorityDefault; explicit values may be anything >= 0.
    int priority = kPriorityDefault;
    // The op's reference impl (plain loops, the oracle tests compare against);
    // op_sdk's add_host_impls() sets it.
    bool reference = false;
    std::string impl_type;   // engine type: "cpu", "ocl"
    ShapeType shape_type = ShapeType::static_shape;
    std::vector<DataType> dtypes;   // of input 0 and output 0; empty = any
    std::vector<Format> formats;    // empty = any
    // Empty string = ok; otherwise why this impl cannot serve `params`.
    std::function<std::string(const KernelParams&)> validate;
    std::function<std::unique_ptr<Impl>(const KernelParams&)> create;
    // Weightable ops: the format the impl's kernel reads the weights input in.
    // When it is not plain and the weights are constant, the flow reorders them
    // once (the `reorder` op) and creates/executes the impl with that layout.
    Format weights_format = Format::plain;
    // The impl applies KernelParams::fused_ops; entries without it never get
    // params with fused ops (check() says so).
    bool fused_ops = false;
    // Ops with a fake_align hook: the kernel's row tile. Leading dims are
    // collapsed and rounded up to it (0 or 1: no alignment).
    size_t fake_align_rows = 0;

    // Checks dtypes/formats/engine type, then validate(). Empty = ok.
    std::string check(const KernelParams& params) const;
    // priority, or the default of this entry's kind when it is kPriorityDefault.
    int effective_priority() const;
};

}   // namespace dynrt
