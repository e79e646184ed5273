// Op definitions: what an op is, independent of any device.
//
// An op module registers one OpDefinition per op: its name, input count, typed
// attribute schema, a pure shape-inference function and the traits the generic
// execution flow needs (this op is shape_of-like; its output size depends on
// data; it is worth a background static build ...). Core never branches on op
// names: everything op-specific is declared here.
#pragma once

#include <cstddef>
#include <functional>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/layout.hpp"
#include "dynrt/op_import.hpp"

namespace dynrt {

struct ShapeInferContext {
    const std::string& node;             // for error messages
    const std::vector<Layout>& inputs;   // current input layouts (maybe dynamic)
    const Attributes& attrs;             // validated attributes
    // Values of inputs the op listed in OpDefinition::value_inputs; nullptr when
    // not known yet (graph build with dynamic producers). Shape inference must then
    // return dynamic dims instead of failing.
    std::vector<const HostTensor*> values;
    const HostTensor* value(size_t i) const { return i < values.size() ? values[i] : nullptr; }
    // True when the flow infers concrete shapes for a run (false while a Program
    // is built): ops without inputs (e.g. a state reader's initial value) tell
    // the graph's partial layout from a run's static one by it.
    bool run_time = false;
};

// Work of one execution, for benchmarks and reports (dynrt test-op --bench):
// floating-point operations and bytes moved between memory and the device.
struct OpCost {
    double flops = 0;
    double bytes = 0;
};

// A per-channel affine map along axis 1 of an [N, C, ...] tensor:
// y[n, c, ...] = x[n, c, ...] * scale[c] + shift[c] (one entry per channel).
struct ChannelAffine {
    std::vector<double> scale, shift;
};

// A fusable op as a standard post-op, which math libraries apply inside
// their own kernels (oneDNN's post-ops): either a unary function of the
// running result x, or a binary one of x and the fused op's other input y.
struct PostOp {
    enum class Fn {
        // binary: x + y, x - y, x * y, x / y, min(x, y), max(x, y)
        add,
        sub,
        mul,
        div,
        min,
        max,
        // unary, alpha and beta as noted
        relu,        // x > 0 ? x : alpha * x
        tanh,        // tanh(x)
        sigmoid,     // 1 / (1 + exp(-x))
        gelu_erf,    // 0.5 x (1 + erf(x / sqrt 2))
        gelu_tanh,   // 0.5 x (1 + tanh(sqrt(2 / pi) (x + 0.044715 x^3)))
        swish,       // x / (1 + exp(-alpha * x))
        elu,         // x > 0 ? x : alpha * (exp(x) - 1)
        exp,         // exp(x)
        log,         // log(x)
        abs,         // |x|
        sqrt,        // sqrt(x)
        clip,        // min(max(x, alpha), beta)
        linear,      // alpha * x + beta
        hardswish    // x * min(max(x + 3, 0), 6) / 6
    };
    Fn fn = Fn::linear;
    float alpha = 0.0f, beta = 0.0f;
    bool binary() const { return fn <= Fn::max; }
};

// The values of a node's inputs, one per input: the tensor of a constant
// input, null for any other.
using ConstantInputs = std::vector<const HostTensor*>;

// Returns one Layout per output. Throws dynrt::Error on invalid shapes; the
// flow adds node/op context.
using ShapeInferFn = std::function<std::vector<Layout>(const ShapeInferContext&)>;

struct OpTraits {
    bool is_input = false;                // graph input (parameter): data set by the request
    bool is_constant = false;             // holds constant data given at build time
    bool shape_of_like = false;           // output depends only on the input *shape*
    bool data_dependent_output = false;   // output shape known only after execution
    bool critical = false;                // dynamic impl triggers a background static build
    bool weightable = false;              // has weights that impls may reorder
    // Fusion (docs/architecture.md, "Fusion"): this op's impls may apply
    // elementwise post-ops (FusedOpDesc) to its output ...
    bool accepts_fused_ops = false;
    // ... and this op can be such a post-op: elementwise, output element i
    // depends only on element i of the input it is fused through (its other
    // inputs broadcast into the output).
    bool fusable = false;
    // Request state (variables kept by an InferRequest across runs, named by the
    // op's state_variable hook). A reader's output is the variable's value
    // once one was assigned; until then its own shape inference and kernel give
    // the initial value. A writer's input becomes the variable's value when the
    // run ends (readers of the same run see the previous value).
    bool reads_state = false;
    bool writes_state = false;
    // Layout-only op (reshape, squeeze, unsqueeze, flatten): output 0 holds
    // input 0's bytes in the same order under another shape. When both layouts
    // are plain and unpadded, the flow runs no kernel: the output is a view of
    // the input's buffer (counter `views`, impl "view" in run stats). The op
    // still registers impls: they run where a view cannot serve (a padded or
    // blocked input).
    bool view = false;
};

struct OpDefinition {
    std::string name;
    std::string doc;   // one line
    size_t min_inputs = 1;
    size_t max_inputs = 1;
    size_t num_outputs = 1;
    // Ops whose output count depends on their attributes (split): the count
    // for a node's attributes. Unset: num_outputs.
    std::function<size_t(const Attributes& attrs)> output_count;
    std::vector<AttrSpec> attrs;
    std::vector<size_t> value_inputs;   // inputs whose values shape inference reads
    ShapeInferFn infer;
    OpTraits traits;
    // In-place target (concat-like): when set, returns the axis (normalised for
    // `rank`) along which the inputs lie one after another in the output, so the
    // producers may write straight into the output buffer at their offsets and
    // this op runs no kernel (docs/architecture.md, "In-place concat").
    std::function<int64_t(const Attributes& attrs, size_t rank)> inplace_axis;
    // Weightable ops: the input holding the weights.
    size_t weights_input = 1;
    // Fake alignment (fully_connected-like): rewrites the runtime layouts of
    // input 0 and output 0 so that the rows (all leading dims collapsed) are a
    // multiple of `rows_tile`; returns false where alignment does not pay (the
    // layouts are then left alone). The flow runs the kernel on the aligned
    // layouts and sizes the input's producer and this op's output to fit.
    std::function<bool(std::vector<Layout>& inputs, std::vector<Layout>& outputs, size_t rows_tile)> fake_align;
    // Fusable ops on OpenCL: an OpenCL C float expression of the op's inputs,
    // given as the expressions `args` (one per input, in input order), with the
    // attributes inlined as literals. Device impls generate their FUSED_OPS code
    // from it (dynrt/ocl_fused_ops.hpp); without it the op runs unfused there.
    std::function<std::string(const Attributes& attrs, const std::vector<std::string>& args)> ocl_post_op;
    // Fusable ops: the op as a PostOp when fused through input `main_input`
    // of its `num_inputs` (a binary PostOp's y is the other input); nullopt
    // where it is none (then engines run the op's host impl on the result).
    std::function<std::optional<PostOp>(const Attributes& attrs, size_t main_input, size_t num_inputs)> post_op;
    // Work of one execution for static input and output shapes. Without it,
    // no FLOPs and the bytes of every input and output (a memory-bound op).
    std::function<OpCost(const std::vector<Layout>& inputs, const std::vector<Layout>& outputs,
                         const Attributes& attrs)>
        cost;
    // Format converters (a reorder-like op): the attributes that make this op
    // turn its input into `target`. The flow reorders constant weights into the
    // format an impl reads through the op that declares this (at most one op).
    std::function<Attributes(Format target)> convert_format;
    // Affine folding (docs/architecture.md, "Affine folding"), when a Program
    // is built: a consumer that is a per-channel affine of its producer's
    // output is folded into the producer's constant inputs and removed.
    // Consumer side: when a node with these attributes and these constant
    // inputs computes output 0 = affine(input 0) along axis 1, the affine;
    // nullopt otherwise (an input it needs is not a constant, another mode).
    std::function<std::optional<ChannelAffine>(const Attributes& attrs, const ConstantInputs& constants)>
        channel_affine;
    // Producer side: new values of its inputs that make output 0 become
    // affine(output 0) along axis 1 (its channel dim): one entry per input,
    // nullopt where the input stays, possibly more entries than the node has
    // inputs (an optional input it lacks, e.g. a bias). Empty when it cannot
    // (a weight it must rewrite is not a constant or has another channel count).
    std::function<std::vector<std::optional<HostTensor>>(const Attributes& attrs, const ConstantInputs& constants,
                                                         const ChannelAffine& affine)>
        absorb_channel_affine;
    // Permutation folding (docs/architecture.md, "Permutation folding"), when
    // a Program is built: a node that only permutes its input's dims goes
    // where its one consumer can read that input unpermuted instead.
    // Producer side: for a node with these attributes whose input 0 has `rank`
    // dims, the permutation its output 0 is (output dim i = input dim
    // perm[i]); nullopt where it is not one.
    std::function<std::optional<std::vector<size_t>>(const Attributes& attrs, size_t rank)> permutation;
    // Consumer side: attributes with which a node of these attributes computes
    // the same outputs when its input `input` is the unpermuted tensor (whose
    // permutation by `perm` it read so far), e.g. a matrix product's
    // transpose flag toggled; nullopt where no attributes do.
    std::function<std::optional<Attributes>(const Attributes& attrs, size_t input, const std::vector<size_t>& perm)>
        absorb_permutation;
    // State readers and writers (OpTraits::reads_state / writes_state): the
    // name of the request variable the node with these attributes uses.
    std::function<std::string(const Attributes& attrs)> state_variable;
    // Model ops this op implements (dynrt/op_import.hpp): the ONNX importer
    // maps a node through the rule naming its op type.
    std::vector<ImportRule> imports;
};

// Outputs of a node of `def` with these attributes (raw or validated; raw
// ones are validated first, which throws for bad ones).
inline size_t output_count(const OpDefinition& def, const Attributes& attrs) {
    return def.output_count ? def.output_count(Attributes::validate(def.attrs, attrs)) : def.num_outputs;
}

// The common part of an op's declaration in one call; the op sets its traits
// and hooks on the result before ModuleRegistrar::add_op.
inline OpDefinition op_def(std::string name, std::string doc, size_t min_inputs, size_t max_inputs,
                           std::vector<AttrSpec> attrs, ShapeInferFn infer) {
    OpDefinition def;
    def.name = std::move(name);
    def.doc = std::move(doc);
    def.min_inputs = min_inputs;
    def.max_inputs = max_inputs;
    def.attrs = std::move(attrs);
    def.infer = std::move(infer);
    return def;
}

}   // namespace dynrt
