#include "layout_op_test.hpp"

#include <cstring>
#include <utility>

#include "dynrt/network.hpp"

namespace dynrt::test {

const std::vector<DataType>& every_dtype() {
    static const std::vector<DataType> all = {DataType::f32, DataType::f16, DataType::i32,    DataType::i64,
                                              DataType::u8,  DataType::i8,  DataType::boolean};
    return all;
}

Attributes axes_attr(std::vector<int64_t> a) { return attrs({{"axes", std::move(a)}}); }

HostTensor axes_value(std::vector<int64_t> a, DataType t) {
    const auto n = static_cast<int64_t>(a.size());
    return HostTensor::from_int64(t, Shape{n}, a);
}

std::vector<std::string> with_node_and_field(std::vector<std::string> words, const std::string& op,
                                             const std::string& field) {
    words.push_back("node 'node' (" + op + ")");
    words.push_back("field '" + field + "'");
    return words;
}

void expect_reference_keeps_bytes(const std::string& op, const Attributes& attrs, const Shape& in,
                                  const Shape& out_shape) {
    for (DataType t : every_dtype()) {
        SCOPED_TRACE(to_string(t));
        const HostTensor x = random_tensor(t, in, 3, -50, 50);
        const HostTensor out = run_once(single_node_program(op, {Layout(PartialShape(in), t)}, attrs), {x});
        ASSERT_EQ(out.shape(), out_shape);
        EXPECT_EQ(0, std::memcmp(out.data(), x.data(), x.bytes()));
    }
}

void expect_view_runs_no_kernel(const ViewCase& c) {
    std::vector<EnginePtr> engines{engine("cpu")};
    if (EnginePtr ocl = ocl_engine()) engines.push_back(ocl);
    for (const EnginePtr& eng : engines) {
        for (DataType t : {DataType::f32, DataType::f16, DataType::i64, DataType::boolean}) {
            SCOPED_TRACE(eng->info().type + " " + to_string(t));
            const auto prog = single_node_program(c.op, {c.input(t)}, c.attrs);
            InferRequest req(Network::create(prog, eng, NetworkOptions()));
            uint64_t seed = 9;
            for (int64_t n : {3, 17, 3, 257}) {
                const HostTensor in = random_tensor(t, c.in_shape(n), seed++, -50, 50);
                req.set_input("in0", in);
                req.infer();
                const HostTensor out = req.get_output(0);
                ASSERT_EQ(out.shape(), c.out_shape(n));
                EXPECT_EQ(0, std::memcmp(out.data(), in.data(), in.bytes()));
                EXPECT_EQ(node_counters(req, "node").views, 1u);
                EXPECT_EQ(node_counters(req, "node").executions, 0u);
            }
        }
    }
}

}   // namespace dynrt::test
