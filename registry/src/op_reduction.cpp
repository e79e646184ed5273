#include "dynrt/op_reduction.hpp"

#include <cstdint>
#include <cstring>
#include <type_traits>
#include <vector>

#include "dynrt/host_tensor.hpp"
#include "dynrt/op_index.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

namespace {

const std::vector<std::string> kScatterReductions = {"none", "add", "mul", "max", "min"};

// The type add and mul run in: unsigned for integers, so they wrap.
template <typename T, bool = std::is_integral_v<T>>
struct Wrapping {
    using type = T;
};
template <typename T>
struct Wrapping<T, true> {
    using type = std::make_unsigned_t<T>;
};

template <typename T>
T combine(ScatterReduction r, T a, T b) {
    using U = typename Wrapping<T>::type;
    switch (r) {
        case ScatterReduction::add: return static_cast<T>(static_cast<U>(a) + static_cast<U>(b));
        case ScatterReduction::mul: return static_cast<T>(static_cast<U>(a) * static_cast<U>(b));
        case ScatterReduction::max: return b > a ? b : a;
        case ScatterReduction::min: return b < a ? b : a;
        default: return b;
    }
}

// uint16_t stands for f16 here: it combines in float.
template <typename T>
void combine_run(unsigned char* dst, const unsigned char* src, size_t n, ScatterReduction r) {
    for (size_t e = 0; e < n; ++e) {
        T a, b;
        std::memcpy(&a, dst + e * sizeof(T), sizeof(T));
        std::memcpy(&b, src + e * sizeof(T), sizeof(T));
        if constexpr (std::is_same_v<T, uint16_t>) a = float_to_half(combine(r, half_to_float(a), half_to_float(b)));
        else a = combine(r, a, b);
        std::memcpy(dst + e * sizeof(T), &a, sizeof(T));
    }
}

}   // namespace

AttrSpec scatter_reduction_attr() {
    return attr_string("reduction", std::string("none"), kScatterReductions,
                       "how an update combines with the element it lands on: none replaces it");
}

ScatterReduction scatter_reduction_of(const std::string& op, const Attributes& a) {
    return static_cast<ScatterReduction>(mode_index(op, kScatterReductions, a.get_string("reduction")));
}

Error scatter_error(const ShapeInferContext& ctx, const std::string& op, const std::string& field,
                    const std::string& why) {
    const std::string shapes = "data " + ctx.inputs.at(0).to_string() + ", indices " + ctx.inputs.at(1).to_string() +
                               " and updates " + ctx.inputs.at(2).to_string();
    return Error(shapes + ": " + why, node_context(ctx.node, op, field));
}

void check_scatter_types(const ShapeInferContext& ctx, const std::string& op) {
    const DataType data = ctx.inputs.at(0).dtype;
    if (!is_index_type(ctx.inputs.at(1).dtype)) throw scatter_error(ctx, op, "indices", "indices must be i32 or i64");
    if (ctx.inputs.at(2).dtype != data) throw scatter_error(ctx, op, "updates", "updates must have the type of data");
    if (data == DataType::boolean && scatter_reduction_of(op, ctx.attrs) != ScatterReduction::none)
        throw scatter_error(ctx, op, "reduction",
                            "reduction '" + ctx.attrs.get_string("reduction") + "' is not defined on boolean data");
}

ScatterCombine scatter_combine_for(DataType t) {
    switch (t) {
        case DataType::f32: return combine_run<float>;
        case DataType::f64: return combine_run<double>;
        case DataType::f16: return combine_run<uint16_t>;
        case DataType::i32: return combine_run<int32_t>;
        case DataType::i64: return combine_run<int64_t>;
        case DataType::u8: return combine_run<uint8_t>;
        case DataType::i8: return combine_run<int8_t>;
        default: return nullptr;
    }
}

}   // namespace dynrt
