// reshape: the same elements under a new shape. The target comes from input 1
// (an i32/i64 1-D tensor, read by value during shape inference) or, with one
// input, from the `shape` attribute.
//
// Target values: a positive value is that dim; at most one -1 is inferred from
// the element count; a 0 copies the input's dim at that position when
// special_zero is true and means an empty dim otherwise. With a dynamic input,
// dims fixed by the target or copied from static input dims stay static, and
// the -1 is still resolved when every input dim it depends on is static.
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/ocl_copy.hpp"
#include "dynrt/op_copy.hpp"
#include "dynrt/op_registry.hpp"
#include "dynrt/op_sdk.hpp"

namespace {

using namespace dynrt;

std::string list_to_string(const std::vector<int64_t>& v) {
    std::string s = "[";
    for (size_t i = 0; i < v.size(); ++i) s += (i ? "," : "") + std::to_string(v[i]);
    return s + "]";
}

// Where the target came from, for errors: the `shape` attribute or input 1.
struct TargetSource {
    const char* field;   // ErrorContext::field ("" for the input)
    const char* name;    // how the message names it
};
constexpr TargetSource kFromAttribute{"shape", "the `shape` attribute"};
constexpr TargetSource kFromInput{"", "the target shape (input 1)"};

// Product of `dims` as an element count. Neither side of a reshape holds more
// than 2^60 elements, so a product past that (or one that would wrap int64) is
// an error naming `what`, never a wrapped count that happens to match.
int64_t element_count(const std::vector<int64_t>& dims, const std::string& what, const char* field) {
    size_t n = 0;
    if (!count_fits(dims, &n)) {
        ErrorContext ctx;
        ctx.field = field;
        throw Error(what + " has more than 2^60 elements", ctx);
    }
    return static_cast<int64_t>(n);
}

PartialShape resolve_target(const PartialShape& in, const std::vector<int64_t>& target, bool special_zero,
                            const TargetSource& src) {
    const std::string target_str = list_to_string(target);
    std::vector<Dimension> out(target.size());
    std::vector<bool> copied(in.rank(), false);
    bool has_infer = false;
    size_t infer_at = 0;
    for (size_t i = 0; i < target.size(); ++i) {
        const int64_t v = target[i];
        if (v == -1) {
            if (has_infer) throw Error("target shape " + target_str + " has more than one -1");
            has_infer = true;
            infer_at = i;
        } else if (v < -1) {
            throw Error("target shape " + target_str + " has invalid value " + std::to_string(v) + " at position " +
                        std::to_string(i));
        } else if (v == 0 && special_zero) {
            if (i >= in.rank())
                throw Error("target shape " + target_str + " copies dim " + std::to_string(i) +
                            " (a 0 with special_zero) but the input " + in.to_string() + " has rank " +
                            std::to_string(in.rank()));
            out[i] = in[i];
            copied[i] = true;
        } else {
            out[i] = Dimension(v);
        }
    }

    const auto mismatch = [&](const std::string& detail) {
        return Error("cannot reshape " + in.to_string() + detail + " to " + target_str);
    };
    const std::string target_what = "cannot reshape " + in.to_string() + " to " + target_str + ": " + src.name +
                                    (has_infer ? " (without the -1)" : "");

    if (in.is_static()) {
        const Shape s = in.to_shape();
        const auto count = static_cast<int64_t>(s.count());
        std::vector<int64_t> known_dims;
        for (size_t i = 0; i < out.size(); ++i)
            if (!(has_infer && i == infer_at)) known_dims.push_back(out[i].get_length());
        const int64_t known = element_count(known_dims, target_what, src.field);
        const std::string detail = " (" + std::to_string(count) + " elements)";
        if (has_infer) {
            if (known == 0 || count % known != 0) throw mismatch(detail);
            out[infer_at] = Dimension(count / known);
        } else if (known != count) {
            throw mismatch(detail);
        }
        return PartialShape(std::move(out));
    }

    // Dynamic input: dims copied through a 0 appear on both sides and cancel, so
    // the rest can still be checked (and the -1 resolved) when the input dims
    // that were not copied are all static.
    std::vector<int64_t> rest_in_dims;
    for (size_t j = 0; j < in.rank(); ++j) {
        if (copied[j]) continue;
        if (in[j].is_dynamic()) {
            if (has_infer) out[infer_at] = Dimension::dynamic();
            return PartialShape(std::move(out));
        }
        rest_in_dims.push_back(in[j].get_length());
    }
    const int64_t rest_in = element_count(rest_in_dims, "input " + in.to_string() + " besides the copied dims", "");
    std::vector<int64_t> rest_out_dims;
    for (size_t i = 0; i < out.size(); ++i) {
        const bool out_copied = special_zero && target[i] == 0;
        if (!out_copied && !(has_infer && i == infer_at)) rest_out_dims.push_back(out[i].get_length());
    }
    const int64_t rest_out = element_count(rest_out_dims, target_what + " besides the copied dims", src.field);
    const std::string detail = " (" + std::to_string(rest_in) + " elements besides the copied dims)";
    if (has_infer) {
        if (rest_out == 0 || rest_in % rest_out != 0) throw mismatch(detail);
        out[infer_at] = Dimension(rest_in / rest_out);
    } else if (rest_in != rest_out) {
        throw mismatch(detail);
    }
    return PartialShape(std::move(out));
}

std::vector<Layout> infer_reshape(const ShapeInferContext& ctx) {
    const Layout& data = ctx.inputs.at(0);
    std::vector<int64_t> target;
    TargetSource src = kFromAttribute;
    if (ctx.inputs.size() > 1) {
        src = kFromInput;
        const Layout& t = ctx.inputs[1];
        if (t.dtype != DataType::i32 && t.dtype != DataType::i64)
            throw Error(std::string("the target shape (input 1) must be i32 or i64, got ") + to_string(t.dtype));
        if (t.shape.rank() != 1)
            throw Error("the target shape (input 1) must be 1-D, got shape " + t.shape.to_string());
        const HostTensor* value = ctx.value(1);
        if (value == nullptr) {
            // Values unknown until the producer runs: only the rank is known,
            // and only if the target's length is.
            if (t.shape[0].is_dynamic())
                throw Error("the target shape (input 1) has dynamic length " + t.shape.to_string() +
                            " and unknown values, so the output rank is unknown");
            return {Layout(PartialShape::dynamic_of_rank(static_cast<size_t>(t.shape[0].get_length())), data.dtype)};
        }
        target = value->to_int64();
    } else {
        target = ctx.attrs.get_ints("shape");
    }
    return {Layout(resolve_target(data.shape, target, ctx.attrs.get_bool("special_zero"), src), data.dtype)};
}

// ONNX ops this op implements (dynrt/op_import.hpp).
bool onnx_reshape(ImportContext& c) {
    if (c.opset() < 5 || c.has("shape")) {
        if (!c.only_attrs({"shape", "consumed_inputs"})) return false;
        c.set("shape", c.ints("shape"));
        c.use_inputs({0});
        return true;
    }
    if (!c.only_attrs({"allowzero"})) return false;
    // allowzero=1: a 0 in the target is an empty dim, not a copy.
    c.set("special_zero", c.i("allowzero", 0) == 0);
    c.use_inputs({0, 1});
    return true;
}

std::vector<ImportRule> onnx_rules() {
    return {onnx_rule("Reshape", 1, 2, onnx_reshape,
                      "target as input 1; `allowzero=1` -> `special_zero=false`; opset < 5 `shape` attribute")};
}

void register_reshape(ModuleRegistrar& reg) {
    OpDefinition def = op_def("reshape", "Same elements under a new shape (from input 1 or the shape attribute)", 1, 2,
                              {attr_ints("shape", std::vector<int64_t>{}, "target shape when there is no input 1"),
                               attr_bool("special_zero", true, "a 0 copies the input dim at that position")},
                              infer_reshape);
    def.value_inputs = {1};
    def.traits.view = true;   // runs no kernel on plain, unpadded layouts
    def.imports = onnx_rules();
    reg.add_op(def);
    CopyHostOptions copy;
    copy.with_count = true;   // "cannot reshape [3,4] (12 elements) to [5,2]"
    add_copy_host_impls(reg, "reshape", copy);
    add_copy_ocl_impls(reg, "reshape");
}

}   // namespace

DYNRT_MODULE("reshape", register_reshape)
