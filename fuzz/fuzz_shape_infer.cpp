// Shape inference of every registered op on decoded layouts, attributes and
// input values: layouts or a dynrt::Error, nothing else. Dims are drawn to
// reach empty tensors, dynamic dims and sizes whose products overflow.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/host_tensor.hpp"
#include "dynrt/op_registry.hpp"
#include "fuzz_input.hpp"
#include "fuzz_registry.hpp"

namespace {

using dynrt::fuzz::Input;

const dynrt::DataType kTypes[] = {dynrt::DataType::f32, dynrt::DataType::f16, dynrt::DataType::i32,
                                  dynrt::DataType::i64, dynrt::DataType::u8,  dynrt::DataType::boolean};

dynrt::Layout draw_layout(Input& in) {
    const dynrt::DataType t = kTypes[in.pick(std::size(kTypes))];
    const size_t rank = in.pick(7);
    std::vector<dynrt::Dimension> dims;
    for (size_t i = 0; i < rank; ++i) {
        const uint8_t k = in.byte();
        if (k < 200) {
            const int64_t d = in.dim();
            dims.emplace_back(d < 0 ? dynrt::Dimension::dynamic() : dynrt::Dimension(d));
        } else {
            const int64_t lo = in.dim(), hi = in.dim();
            dims.emplace_back(lo < 0 ? 0 : lo, hi < lo ? dynrt::Dimension::kUnbounded : hi);
        }
    }
    return dynrt::Layout(dynrt::PartialShape(dims), t);
}

dynrt::AttrValue draw_attr(Input& in, const dynrt::AttrSpec& spec) {
    auto ints = [&] {
        std::vector<int64_t> v(in.pick(6));
        for (auto& x : v) x = in.byte() < 200 ? in.dim() - 2 : static_cast<int64_t>(in.u64());
        return v;
    };
    switch (spec.type) {
        case dynrt::AttrType::Int: return in.byte() < 200 ? in.dim() - 3 : static_cast<int64_t>(in.u64());
        case dynrt::AttrType::Float: return static_cast<double>(static_cast<int64_t>(in.u64())) / 1e9;
        case dynrt::AttrType::Bool: return in.byte() % 2 == 1;
        case dynrt::AttrType::String:
            if (!spec.allowed.empty() && in.byte() < 220) return spec.allowed[in.pick(spec.allowed.size())];
            return in.text(8);
        case dynrt::AttrType::Ints: return ints();
        case dynrt::AttrType::Floats: {
            std::vector<double> v;
            for (int64_t x : ints()) v.push_back(static_cast<double>(x) / 7);
            return v;
        }
        case dynrt::AttrType::Strings: return std::vector<std::string>{in.text(8)};
    }
    return int64_t{0};
}

// Values for the inputs the op reads by value, when small enough to hold.
std::vector<std::optional<dynrt::HostTensor>> draw_values(Input& in, const dynrt::OpDefinition& def,
                                                          const std::vector<dynrt::Layout>& layouts) {
    std::vector<std::optional<dynrt::HostTensor>> values(layouts.size());
    for (size_t i : def.value_inputs) {
        if (i >= layouts.size() || !layouts[i].is_static() || in.byte() < 40) continue;
        const dynrt::Shape s = layouts[i].get_shape();
        size_t n = 0;
        if (!dynrt::count_fits(s.dims(), &n) || n > 64) continue;
        dynrt::HostTensor t(layouts[i].dtype, s);
        for (size_t e = 0; e < n; ++e) t.set_from_double(e, static_cast<double>(in.dim() - 2));
        values[i] = std::move(t);
    }
    return values;
}

void infer_once(Input& in, const dynrt::Registry& reg, const std::vector<std::string>& ops) {
    const dynrt::OpDefinition& def = reg.op(ops[in.pick(ops.size())]).def;
    if (!def.infer) return;
    // Variadic ops (max_inputs SIZE_MAX) get at most 8 inputs more than their minimum.
    const size_t max_inputs = std::min(def.max_inputs, def.min_inputs + 8);
    const size_t span = max_inputs >= def.min_inputs ? max_inputs - def.min_inputs + 1 : 1;
    std::vector<dynrt::Layout> layouts(def.min_inputs + in.pick(span + 1));   // sometimes one too many
    for (auto& l : layouts) l = draw_layout(in);
    dynrt::Attributes raw;
    for (const auto& spec : def.attrs)
        if (in.byte() < 200) raw.set(spec.name, draw_attr(in, spec));
    const dynrt::Attributes attrs = dynrt::Attributes::validate(def.attrs, raw);
    const std::vector<std::optional<dynrt::HostTensor>> values = draw_values(in, def, layouts);
    const std::string node = "fuzz";
    dynrt::ShapeInferContext ctx{node, layouts, attrs, {}};
    for (const auto& v : values) ctx.values.push_back(v ? &*v : nullptr);
    ctx.run_time = in.byte() % 2 == 1;
    for (const dynrt::Layout& out : def.infer(ctx))
        if (out.is_static()) (void)out.bytes();   // a static result has a size that fits
}

}   // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::shared_ptr<const dynrt::Registry> registry = dynrt::fuzz::registry();
    static const std::vector<std::string> ops = registry->op_names();
    Input in(data, size);
    try {
        infer_once(in, *registry, ops);
    } catch (const dynrt::Error&) {
    }
    return 0;
}
