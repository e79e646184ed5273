// Test support of the layout-only ops (squeeze, unsqueeze, flatten,
// transpose): elements that move but never change, so their tests run every
// dtype and compare bytes. Their ops/<op>/test_<op>.cpp call these next to the
// three drivers of op_test.hpp.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "dynrt/attributes.hpp"
#include "dynrt/host_tensor.hpp"
#include "op_test.hpp"

namespace dynrt::test {

// f32, f16, i32, i64, u8, i8 and boolean: every dtype a byte-moving op serves.
const std::vector<DataType>& every_dtype();

// {"axes": a}: the attributes of squeeze and unsqueeze.
Attributes axes_attr(std::vector<int64_t> a);
// The axes as a 1-D tensor of dtype `t`, for input 1.
HostTensor axes_value(std::vector<int64_t> a, DataType t = DataType::i64);

// `words` and then the words that place an error: "node 'node' (<op>)" and
// "field '<field>'", for the error rows of a shape-inference table.
std::vector<std::string> with_node_and_field(std::vector<std::string> words, const std::string& op,
                                             const std::string& field);

// The reference on one run of `in` (every dtype): the output has shape
// `out_shape` and the input's bytes.
void expect_reference_keeps_bytes(const std::string& op, const Attributes& attrs, const Shape& in,
                                  const Shape& out_shape);

// A view op (OpTraits::view) with views on: on every engine, for f32, f16,
// i64 and boolean, one request fed inputs of shape in_shape(n) for n = 3, 17,
// 3, 257 (input layout `input(t)`) runs no kernel, its output has shape
// out_shape(n) and the input's bytes.
struct ViewCase {
    std::string op;
    Attributes attrs;
    std::function<Layout(DataType)> input;
    std::function<Shape(int64_t)> in_shape;
    std::function<Shape(int64_t)> out_shape;
};
void expect_view_runs_no_kernel(const ViewCase& c);

}   // namespace dynrt::test
