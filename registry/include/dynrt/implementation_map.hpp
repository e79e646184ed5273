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

// kernel_impl_params: everything an impl may depend on for one execution.
struct KernelParams {
    std::string node;
    const OpDefinition* op = nullptr;
    const Attributes* attrs = nullptr;
    std::vector<Layout> inputs;
    std::vector<Layout> outputs;
    Engine* engine = nullptr;
};

struct ExecContext {
    Stream& stream;
    const KernelParams& params;               // current layouts
    const std::vector<MemoryPtr>& inputs;     // views with the current layouts
    const std::vector<MemoryPtr>& outputs;
    // Ops with data-dependent output shapes write the actual output layouts here
    // (the outputs were allocated for the upper bound their shape inference gave).
    std::vector<Layout>* actual_outputs = nullptr;
};

class Impl {
public:
    virtual ~Impl();
    virtual void execute(ExecContext& ctx) = 0;
    virtual std::string name() const = 0;     // e.g. "cumsum_ref"
    virtual bool is_dynamic() const = 0;
};
using ImplPtr = std::shared_ptr<Impl>;

struct ImplEntry {
    std::string name;                          // unique per op, e.g. "cpu_ref_dynamic"
    std::string impl_type;                     // engine type: "cpu", "ocl"
    ShapeType shape_type = ShapeType::static_shape;
    std::vector<DataType> dtypes;              // of input 0 and output 0; empty = any
    std::vector<Format> formats;               // empty = any
    // Empty string = ok; otherwise why this impl cannot serve `params`.
    std::function<std::string(const KernelParams&)> validate;
    std::function<std::unique_ptr<Impl>(const KernelParams&)> create;

    // Checks dtypes/formats/engine type, then validate(). Empty = ok.
    std::string check(const KernelParams& params) const;
};

}  // namespace dynrt
