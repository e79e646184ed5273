// The ONNX importer and `dynrt onnx-test`: TensorProto decoding (raw and typed
// fields), attribute mapping, node-test runs and every bad-input error.
#include <gtest/gtest.h>
#include <cmath>

#if defined(DYNRT_HAVE_ONNX)

#include <fcntl.h>
#include <onnx/onnx_pb.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <tuple>

#include "dynrt/error.hpp"
#include "onnx_build.hpp"
#include "onnx_import.hpp"
#include "test_support.hpp"

using namespace dynrt;
namespace fs = std::filesystem;
namespace ox = ::onnx;
namespace di = dynrt::onnx;

namespace {

using namespace test::onnx_build;

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    return "no error";
}

// A temporary folder, removed at the end of the test.
struct TempDir {
    fs::path path;
    TempDir() {
        path = fs::temp_directory_path() /
               ("dynrt_onnx_test_" + std::to_string(::testing::UnitTest::GetInstance()->random_seed()) + "_" +
                ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~TempDir() { fs::remove_all(path); }
};

// A node-test folder for `op` with one float input [2,3] and one output.
ox::ModelProto unary_model(const std::string& op, int nodes = 1) {
    ox::ModelProto m = empty_model();
    auto* g = m.mutable_graph();
    for (int i = 0; i < nodes; ++i)
        add_node(m, op, {i == 0 ? "x" : "t" + std::to_string(i)}, {i == nodes - 1 ? "y" : "t" + std::to_string(i + 1)});
    add_value(g->add_input(), "x", ox::TensorProto::FLOAT, {2, 3});
    add_value(g->add_output(), "y", ox::TensorProto::FLOAT, {2, 3});
    return m;
}

// A node-test folder `f` with the model and one data set of one input and one output.
void write_case(const fs::path& f, const ox::ModelProto& model, const ox::TensorProto& in, const ox::TensorProto& out) {
    write_proto(f / "model.onnx", model);
    write_proto(f / "test_data_set_0" / "input_0.pb", in);
    write_proto(f / "test_data_set_0" / "output_0.pb", out);
}

di::CaseResult run_one(const fs::path& folder) {
    di::TestOptions opt;
    const di::TestReport r = di::run_tests(test::registry(), {folder.string()}, opt);
    EXPECT_EQ(r.cases.size(), 1u);
    return r.cases.empty() ? di::CaseResult{} : r.cases[0];
}

di::Mapped map(const std::string& op, std::map<std::string, di::OnnxAttr> attrs, const std::vector<di::MapInput>& in,
               int64_t opset = 13) {
    di::OnnxNode n;
    n.op_type = op;
    n.outputs = {"y"};
    for (size_t i = 0; i < in.size(); ++i) n.inputs.push_back(in[i].present ? "i" + std::to_string(i) : "");
    n.attrs = std::move(attrs);
    return di::map_node(*test::registry(), n, opset, in);
}

di::MapInput input(const Shape& s, DataType t = DataType::f32, const HostTensor* value = nullptr) {
    di::MapInput m;
    m.present = true;
    m.layout = Layout(PartialShape(s), t);
    m.value = value;
    return m;
}

di::OnnxAttr a_int(int64_t v) {
    di::OnnxAttr a;
    a.kind = di::OnnxAttr::Kind::Int;
    a.i = v;
    return a;
}
di::OnnxAttr a_float(double v) {
    di::OnnxAttr a;
    a.kind = di::OnnxAttr::Kind::Float;
    a.f = v;
    return a;
}
di::OnnxAttr a_ints(std::vector<int64_t> v) {
    di::OnnxAttr a;
    a.kind = di::OnnxAttr::Kind::Ints;
    a.ints = std::move(v);
    return a;
}
di::OnnxAttr a_str(std::string v) {
    di::OnnxAttr a;
    a.kind = di::OnnxAttr::Kind::String;
    a.s = std::move(v);
    return a;
}

}   // namespace

// ---- TensorProto -------------------------------------------------------------

TEST(OnnxTensor, RawAndTypedFloatData_DecodeToTheSameValues) {
    const std::vector<float> v = {1.5f, -2.f, 0.25f, 3.f, 4.f, -0.5f};
    for (bool raw : {true, false}) {
        const HostTensor t = di::parse_tensor(float_tensor({2, 3}, v, raw).SerializeAsString(), "t.pb");
        EXPECT_EQ(t.dtype(), DataType::f32);
        EXPECT_EQ(t.shape(), Shape({2, 3}));
        for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(t.as<float>()[i], v[i]) << "raw=" << raw << " i=" << i;
    }
}

TEST(OnnxTensor, TypedIntegerBoolAndHalfFields_Decode) {
    ox::TensorProto i64;
    i64.add_dims(3);
    i64.set_data_type(ox::TensorProto::INT64);
    for (int64_t x : {int64_t{-7}, int64_t{0}, int64_t{1} << 40}) i64.add_int64_data(x);
    EXPECT_EQ(di::parse_tensor(i64.SerializeAsString(), "a.pb").to_int64(),
              (std::vector<int64_t>{-7, 0, int64_t{1} << 40}));

    ox::TensorProto i8;   // int8 and bool values live in int32_data
    i8.add_dims(2);
    i8.set_data_type(ox::TensorProto::INT8);
    i8.add_int32_data(-100);
    i8.add_int32_data(27);
    const HostTensor t8 = di::parse_tensor(i8.SerializeAsString(), "b.pb");
    EXPECT_EQ(t8.dtype(), DataType::i8);
    EXPECT_EQ(t8.to_int64(), (std::vector<int64_t>{-100, 27}));

    ox::TensorProto b;
    b.add_dims(3);
    b.set_data_type(ox::TensorProto::BOOL);
    for (int x : {1, 0, 1}) b.add_int32_data(x);
    EXPECT_EQ(di::parse_tensor(b.SerializeAsString(), "c.pb").to_int64(), (std::vector<int64_t>{1, 0, 1}));

    ox::TensorProto h;   // float16: the IEEE bits in int32_data; 0x3C00 = 1.0, 0xC000 = -2.0
    h.add_dims(2);
    h.set_data_type(ox::TensorProto::FLOAT16);
    h.add_int32_data(0x3C00);
    h.add_int32_data(0xC000);
    const HostTensor th = di::parse_tensor(h.SerializeAsString(), "d.pb");
    EXPECT_EQ(th.dtype(), DataType::f16);
    EXPECT_EQ(th.get_as_double(0), 1.0);
    EXPECT_EQ(th.get_as_double(1), -2.0);

    ox::TensorProto scalar;   // no dims: rank 0, one value
    scalar.set_data_type(ox::TensorProto::INT32);
    scalar.add_int32_data(42);
    const HostTensor ts = di::parse_tensor(scalar.SerializeAsString(), "e.pb");
    EXPECT_EQ(ts.shape().rank(), 0u);
    EXPECT_EQ(ts.to_int64(), (std::vector<int64_t>{42}));
}

TEST(OnnxTensor, UnsupportedDtypeOrWrongCount_IsAnErrorNamingTheFile) {
    ox::TensorProto d;
    d.add_dims(1);
    d.set_data_type(ox::TensorProto::INT16);
    d.add_double_data(1.0);
    const std::string e1 = error_of([&] { di::parse_tensor(d.SerializeAsString(), "i16.pb"); });
    EXPECT_NE(e1.find("i16.pb"), std::string::npos) << e1;
    EXPECT_NE(e1.find("INT16"), std::string::npos) << e1;
    const std::string e2 = error_of([&] {
        di::parse_tensor(float_tensor({2, 2}, {1, 2, 3}, false).SerializeAsString(), "few.pb");
    });
    EXPECT_NE(e2.find("few.pb"), std::string::npos) << e2;
    EXPECT_NE(e2.find("holds 3 values"), std::string::npos) << e2;
    const std::string e3 = error_of([&] {
        di::parse_tensor(float_tensor({2, 2}, {1, 2, 3}, true).SerializeAsString(), "raw.pb");
    });
    EXPECT_NE(e3.find("raw.pb"), std::string::npos) << e3;
    EXPECT_NE(error_of([] { di::parse_tensor("\xff\xff\xff", "junk.pb"); }).find("junk.pb"), std::string::npos);
}

// ---- attribute mapping -----------------------------------------------------------

TEST(OnnxMap, Gemm_TransAlphaBetaBecomeDynrtAttributes) {
    const auto m = map("Gemm", {{"transA", a_int(1)}, {"alpha", a_float(0.5)}, {"beta", a_float(2)}},
                       {input({3, 2}), input({3, 4}), input({4})});
    ASSERT_TRUE(m.unsupported.empty()) << m.unsupported;
    EXPECT_EQ(m.op, "gemm");
    EXPECT_TRUE(m.attrs.get_bool("transpose_a"));
    EXPECT_FALSE(m.attrs.get_bool("transpose_b"));
    EXPECT_DOUBLE_EQ(m.attrs.get_float("alpha"), 0.5);
    EXPECT_DOUBLE_EQ(m.attrs.get_float("beta"), 2.0);
    EXPECT_EQ(m.inputs, (std::vector<size_t>{0, 1, 2}));
    // C left out: two inputs.
    di::MapInput absent;
    EXPECT_EQ(map("Gemm", {}, {input({3, 2}), input({2, 4}), absent}).inputs, (std::vector<size_t>{0, 1}));
}

TEST(OnnxMap, ConvPads_SplitIntoBeginAndEnd) {
    const auto m = map("Conv", {{"pads", a_ints({1, 2, 3, 4})}, {"strides", a_ints({2, 1})}, {"group", a_int(2)}},
                       {input({1, 4, 8, 8}), input({6, 2, 3, 3})});
    ASSERT_TRUE(m.unsupported.empty()) << m.unsupported;
    EXPECT_EQ(m.op, "convolution");
    EXPECT_EQ(m.attrs.get_ints("pads_begin"), (std::vector<int64_t>{1, 2}));
    EXPECT_EQ(m.attrs.get_ints("pads_end"), (std::vector<int64_t>{3, 4}));
    EXPECT_EQ(m.attrs.get_ints("strides"), (std::vector<int64_t>{2, 1}));
    EXPECT_EQ(m.attrs.get_int("groups"), 2);
}

TEST(OnnxMap, ConvAutoPad_IsKeptForShapeInferenceAndAnyRankMaps) {
    // SAME pads depend on the input's spatial dims: the op computes them in
    // shape inference (dynamic dims included), so the rule passes auto_pad on.
    const std::vector<di::MapInput> in = {input({1, 1, 6, 6}), input({1, 1, 3, 3})};
    EXPECT_EQ(
        map("Conv", {{"auto_pad", a_str("SAME_UPPER")}, {"strides", a_ints({2, 2})}}, in).attrs.get_string("auto_pad"),
        "same_upper");
    EXPECT_EQ(map("Conv", {{"auto_pad", a_str("SAME_LOWER")}}, in).attrs.get_string("auto_pad"), "same_lower");
    EXPECT_EQ(map("Conv", {{"auto_pad", a_str("VALID")}}, in).attrs.get_string("auto_pad"), "valid");
    EXPECT_NE(map("Conv", {{"auto_pad", a_str("BOGUS")}}, in).unsupported.find("BOGUS"), std::string::npos);
    const auto conv1d = map("Conv", {}, {input({1, 1, 6}), input({1, 1, 3})});
    EXPECT_TRUE(conv1d.unsupported.empty()) << conv1d.unsupported;
    EXPECT_EQ(conv1d.op, "convolution");
}

TEST(OnnxMap, CumSumAxisInput_BecomesTheAxisAttribute) {
    const HostTensor axis = HostTensor::from_int64(DataType::i32, Shape{}, {-1});
    const auto m = map("CumSum", {{"exclusive", a_int(1)}, {"reverse", a_int(1)}},
                       {input({2, 3}), input(Shape{}, DataType::i32, &axis)});
    ASSERT_TRUE(m.unsupported.empty()) << m.unsupported;
    EXPECT_EQ(m.attrs.get_int("axis"), -1);
    EXPECT_TRUE(m.attrs.get_bool("exclusive"));
    EXPECT_TRUE(m.attrs.get_bool("reverse"));
    EXPECT_EQ(m.inputs, (std::vector<size_t>{0}));
    // Without a known value there is no attribute to give.
    EXPECT_FALSE(map("CumSum", {}, {input({2, 3}), input(Shape{}, DataType::i32)}).unsupported.empty());
}

TEST(OnnxMap, ReshapeAllowZero_TurnsSpecialZeroOff) {
    EXPECT_FALSE(map("Reshape", {{"allowzero", a_int(1)}}, {input({2, 3}), input({2}, DataType::i64)})
                     .attrs.get_bool("special_zero"));
    EXPECT_TRUE(map("Reshape", {}, {input({2, 3}), input({2}, DataType::i64)}).attrs.get_bool("special_zero"));
}

TEST(OnnxMap, ActivationsAndBinaryOps_MapWithDefaults) {
    const auto elu = map("Elu", {}, {input({3})});
    EXPECT_EQ(elu.attrs.get_string("func"), "elu");
    EXPECT_DOUBLE_EQ(elu.attrs.get_float("alpha"), 1.0);
    EXPECT_NEAR(map("LeakyRelu", {}, {input({3})}).attrs.get_float("alpha"), 0.01, 1e-9);
    EXPECT_EQ(map("HardSwish", {}, {input({3})}).attrs.get_string("func"), "hswish");
    EXPECT_EQ(map("Pow", {}, {input({3}), input({1})}).attrs.get_string("mode"), "pow");
    EXPECT_EQ(map("Max", {}, {input({3})}).attrs.get_string("func"), "identity");
    EXPECT_NE(map("Add", {}, {input({3}), input({3}, DataType::i32)}).unsupported.find("different types"),
              std::string::npos);
    EXPECT_NE(map("MatMul", {}, {input({3}), input({3, 2})}).unsupported.find("1-D"), std::string::npos);
}

TEST(OnnxMap, UnknownAttributeOrOp_IsNeverIgnored) {
    EXPECT_NE(map("Relu", {{"bogus", a_int(1)}}, {input({3})}).unsupported.find("'bogus'"), std::string::npos);
    EXPECT_THROW(map("NoSuchOnnxOp", {}, {input({1, 1, 4, 4})}), Error);
}

// ---- node-test folders ---------------------------------------------------------------

TEST(OnnxTest, ReluFolder_PassesStaticallyAndThroughTheDynamicPath) {
    TempDir dir;
    const fs::path f = dir.path / "test_relu";
    write_case(f, unary_model("Relu"), float_tensor({2, 3}, {-1, 2, -3, 4, 0, 6}, true),
               float_tensor({2, 3}, {0, 2, 0, 4, 0, 6}, false));
    const auto r = run_one(f);
    EXPECT_EQ(r.status, "pass") << r.detail;
    EXPECT_EQ(r.onnx_op, "Relu");
    EXPECT_FALSE(r.impl_static.empty());
    EXPECT_FALSE(r.impl_dynamic.empty());
    EXPECT_NE(r.impl_static, r.impl_dynamic);   // static, then the dynamic impl
}

TEST(OnnxTest, WrongExpectedOutput_Fails) {
    TempDir dir;
    const fs::path f = dir.path / "test_relu_wrong";
    write_case(f, unary_model("Relu"), float_tensor({2, 3}, {-1, 2, -3, 4, 0, 6}, true),
               float_tensor({2, 3}, {0, 2, 0, 4, 0, 6.01f}, true));
    const auto r = run_one(f);
    EXPECT_EQ(r.status, "FAIL");
    EXPECT_NE(r.detail.find("element 5"), std::string::npos) << r.detail;
}

TEST(OnnxTest, UnknownOp_IsAnErrorNamingTheModelFile) {
    TempDir dir;
    const fs::path f = dir.path / "test_frob";
    write_case(f, unary_model("Frobnicate"), float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}, true),
               float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}, true));
    const auto r = run_one(f);
    EXPECT_EQ(r.status, "error");
    EXPECT_NE(r.detail.find("unknown ONNX op 'Frobnicate'"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find((f / "model.onnx").string()), std::string::npos) << r.detail;
}

TEST(OnnxTest, TwoNodeFolder_RunsEveryDataSetInOrderOnOneNetwork) {
    TempDir dir;
    const fs::path f = dir.path / "test_relu_neg";
    // Relu -> Neg with a dim_param batch: data sets of two shapes on one network.
    ox::ModelProto m = empty_model();
    add_node(m, "Relu", {"x"}, {"t"});
    add_node(m, "Neg", {"t"}, {"y"});
    add_value(m.mutable_graph()->add_input(), "x", ox::TensorProto::FLOAT, {0, 3}, {"N"});
    add_value(m.mutable_graph()->add_output(), "y", ox::TensorProto::FLOAT, {0, 3}, {"N"});
    write_case(f, m, float_tensor({1, 3}, {-1, 2, -3}, true), float_tensor({1, 3}, {0, -2, 0}, true));
    write_proto(f / "test_data_set_1" / "input_0.pb", float_tensor({2, 3}, {4, -5, 6, -7, 8, 0}, false));
    write_proto(f / "test_data_set_1" / "output_0.pb", float_tensor({2, 3}, {-4, 0, -6, 0, -8, 0}, false));
    di::TestReport r = di::run_tests(test::registry(), {f.string()}, di::TestOptions{});
    ASSERT_EQ(r.cases.size(), 2u);
    for (const auto& c : r.cases) {
        EXPECT_EQ(c.status, "pass") << c.data_set << ": " << c.detail;
        EXPECT_EQ(c.onnx_op, f.filename().string());   // a model folder given by name is reported by name
        EXPECT_FALSE(c.impl_static.empty());
        EXPECT_FALSE(c.impl_dynamic.empty());
    }
    EXPECT_EQ(r.cases[1].data_set, "test_data_set_1");
    // A wrong value in the second data set fails that data set only, naming the output.
    write_proto(f / "test_data_set_1" / "output_0.pb", float_tensor({2, 3}, {-4, 0, -6, 0, -8, 1}, false));
    r = di::run_tests(test::registry(), {dir.path.string()}, di::TestOptions{});   // scanned: run, not skipped
    EXPECT_TRUE(r.skipped.empty());
    ASSERT_EQ(r.cases.size(), 2u);
    EXPECT_EQ(r.cases[0].status, "pass") << r.cases[0].detail;
    EXPECT_EQ(r.cases[1].status, "FAIL");
    EXPECT_NE(r.cases[1].detail.find("output 'y'"), std::string::npos) << r.cases[1].detail;
    // An op filter leaves graphs out.
    di::TestOptions relu_only;
    relu_only.ops = {"Relu"};
    EXPECT_TRUE(di::run_tests(test::registry(), {dir.path.string()}, relu_only).cases.empty());
}

TEST(OnnxTest, GraphWithAnUnclaimedOp_IsSkippedWhenScannedAndAnErrorWhenNamed) {
    TempDir dir;
    const fs::path f = dir.path / "test_relu_frob";
    ox::ModelProto m = unary_model("Relu", 2);
    m.mutable_graph()->mutable_node(1)->set_op_type("Frobnicate");
    write_case(f, m, float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}, true), float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}, true));
    const auto scanned = di::run_tests(test::registry(), {dir.path.string()}, di::TestOptions{});
    EXPECT_TRUE(scanned.cases.empty());
    ASSERT_EQ(scanned.skipped.size(), 1u);
    EXPECT_NE(scanned.skipped[0].find("Frobnicate"), std::string::npos) << scanned.skipped[0];
    // -v names the folder and the op; the summary only counts it.
    EXPECT_NE(di::summary_text(scanned, true).find("skipped  test_relu_frob: op Frobnicate not claimed"),
              std::string::npos)
        << di::summary_text(scanned, true);
    EXPECT_EQ(di::summary_text(scanned, false).find("skipped  test_relu_frob"), std::string::npos);
    const auto r = run_one(f);
    EXPECT_EQ(r.status, "error");
    EXPECT_NE(r.detail.find("unknown ONNX op 'Frobnicate'"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find((f / "model.onnx").string()), std::string::npos) << r.detail;
}

TEST(OnnxTest, DataOfUnsupportedDtype_IsAnErrorNamingTheDataFile) {
    TempDir dir;
    const fs::path f = dir.path / "test_relu_double";
    write_proto(f / "model.onnx", unary_model("Relu"));
    ox::TensorProto d;
    d.add_dims(2);
    d.add_dims(3);
    d.set_data_type(ox::TensorProto::INT16);
    for (int i = 0; i < 6; ++i) d.add_double_data(i);
    write_proto(f / "test_data_set_0" / "input_0.pb", d);
    write_proto(f / "test_data_set_0" / "output_0.pb", float_tensor({2, 3}, {0, 1, 2, 3, 4, 5}, true));
    const auto r = run_one(f);
    EXPECT_EQ(r.status, "error");
    EXPECT_NE(r.detail.find("INT16"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("input_0.pb"), std::string::npos) << r.detail;
}

TEST(OnnxTest, ModelDeclaringAnUnsupportedDtype_IsUnsupportedNotPassed) {
    TempDir dir;
    const fs::path f = dir.path / "test_relu_i16";
    ox::ModelProto m = unary_model("Relu");
    m.mutable_graph()->mutable_input(0)->mutable_type()->mutable_tensor_type()->set_elem_type(ox::TensorProto::INT16);
    write_case(f, m, float_tensor({2, 3}, {0, 1, 2, 3, 4, 5}, true), float_tensor({2, 3}, {0, 1, 2, 3, 4, 5}, true));
    const auto r = run_one(f);
    EXPECT_EQ(r.status, "unsupported");
    EXPECT_NE(r.detail.find("INT16"), std::string::npos) << r.detail;
}

TEST(OnnxTest, ShapeMismatchBetweenModelAndData_IsAnErrorNamingTheDataFile) {
    TempDir dir;
    const fs::path f = dir.path / "test_relu_shape";
    write_case(f, unary_model("Relu"), float_tensor({3, 2}, {1, 2, 3, 4, 5, 6}, true),
               float_tensor({2, 3}, {1, 2, 3, 4, 5, 6}, true));
    const auto r = run_one(f);
    EXPECT_EQ(r.status, "error");
    EXPECT_NE(r.detail.find("shape mismatch"), std::string::npos) << r.detail;
    EXPECT_NE(r.detail.find("input_0.pb"), std::string::npos) << r.detail;
}

TEST(OnnxTest, ClaimedOps_AreThoseWhoseDynrtOpIsLoaded) {
    const auto claimed = di::claimed_ops(*test::registry());
    EXPECT_EQ(claimed.at("Gemm"), "gemm");
    EXPECT_EQ(claimed.at("MatMul"), "gemm");
    EXPECT_EQ(claimed.at("CumSum"), "cumsum");
    EXPECT_EQ(claimed.count("NoSuchOnnxOp"), 0u);
    const Registry empty;
    EXPECT_TRUE(di::claimed_ops(empty).empty());
}

// ---- graphs ---------------------------------------------------------------------------

namespace {

// `m` written into `dir` and loaded back, so that errors name its file.
di::OnnxModel load(const TempDir& dir, const ox::ModelProto& m) {
    write_proto(dir.path / "model.onnx", m);
    return di::load_model((dir.path / "model.onnx").string());
}

// The message of importing `m`, which must name the model file.
std::string import_error(const TempDir& dir, const ox::ModelProto& m) {
    const di::OnnxModel model = load(dir, m);
    const std::string e = error_of([&] { di::import_graph(test::registry(), model); });
    EXPECT_NE(e.find((dir.path / "model.onnx").string()), std::string::npos) << e;
    return e;
}

size_t op_nodes(const Program& p) {
    size_t n = 0;
    for (const Node& node : p.nodes()) n += node.is_op() ? 1 : 0;
    return n;
}

void expect_near(const HostTensor& got, const Shape& shape, const std::vector<float>& want) {
    ASSERT_EQ(got.shape(), shape);
    ASSERT_EQ(got.count(), want.size());
    for (size_t i = 0; i < want.size(); ++i) EXPECT_NEAR(got.as<float>()[i], want[i], 1e-5) << "element " << i;
}

}   // namespace

TEST(OnnxGraph, MatMulAddReluWithInitializers_RunsAcrossShapesOnOneNetwork) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    add_node(m, "MatMul", {"X", "W"}, {"h"}, "mm");
    add_node(m, "Add", {"h", "B"}, {"a"}, "bias");
    add_node(m, "Relu", {"a"}, {"Y"}, "act");
    const std::vector<float> w = {1, -1, 0.5f, 2, -2, 0.25f};   // [3,2], typed floats
    const std::vector<float> b = {0.5f, -1};                    // [2], raw_data
    *m.mutable_graph()->add_initializer() = float_tensor({3, 2}, w, false);
    m.mutable_graph()->mutable_initializer(0)->set_name("W");
    *m.mutable_graph()->add_initializer() = float_tensor({2}, b, true);
    m.mutable_graph()->mutable_initializer(1)->set_name("B");
    add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {0, 3}, {"N"});
    add_value(m.mutable_graph()->add_input(), "W", ox::TensorProto::FLOAT, {3, 2});   // an initialized input
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {0, 2}, {"N"});
    const di::OnnxModel model = load(dir, m);
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
    ASSERT_EQ(g.inputs.size(), 1u);   // W is a constant, not an input
    EXPECT_TRUE(g.inputs[0].layout.shape[0].is_dynamic());
    EXPECT_EQ(g.inputs[0].layout.shape[1], Dimension(3));
    EXPECT_EQ(g.inputs[0].dim_params, (std::vector<std::string>{"N", ""}));
    EXPECT_EQ(op_nodes(*g.program), 3u);
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, model.file);
    uint64_t seed = 1;
    for (int64_t n : {1, 4, 2, 4}) {
        const HostTensor x = test::random_tensor(DataType::f32, Shape{n, 3}, seed++);
        std::vector<float> want(static_cast<size_t>(n) * 2);
        for (int64_t r = 0; r < n; ++r)
            for (int64_t c = 0; c < 2; ++c) {
                double acc = b[static_cast<size_t>(c)];
                for (int64_t k = 0; k < 3; ++k)
                    acc += double(x.as<float>()[r * 3 + k]) * w[static_cast<size_t>(k * 2 + c)];
                want[static_cast<size_t>(r * 2 + c)] = static_cast<float>(std::max(acc, 0.0));
            }
        run.set_input("X", x);
        run.infer();
        SCOPED_TRACE("N = " + std::to_string(n));
        expect_near(run.output(0), Shape{n, 2}, want);
    }
}

TEST(OnnxGraph, IdentityAndConstantNodes_BecomeAliasesAndConstants) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    add_node(m, "Identity", {"X"}, {"xi"});
    auto* c = add_node(m, "Constant", {}, {"c"}, "scale");
    auto* a = c->add_attribute();
    a->set_name("value_floats");
    a->set_type(ox::AttributeProto::FLOATS);
    for (float f : {1.f, 2.f, 3.f}) a->add_floats(f);
    auto* h = add_node(m, "Constant", {}, {"h"}, "half");
    a = h->add_attribute();
    a->set_name("value");
    a->set_type(ox::AttributeProto::TENSOR);
    *a->mutable_t() = float_tensor({}, {0.5f}, true);
    auto* target = add_node(m, "Constant", {}, {"shape"});
    a = target->add_attribute();
    a->set_name("value_ints");
    a->set_type(ox::AttributeProto::INTS);
    for (int64_t d : {3, 2}) a->add_ints(d);
    add_node(m, "Mul", {"xi", "c"}, {"p"}, "mul");
    add_node(m, "Sub", {"p", "h"}, {"s"}, "sub");
    add_node(m, "Reshape", {"s", "shape"}, {"r"}, "reshape");
    add_node(m, "Identity", {"r"}, {"Y"});
    *m.mutable_graph()->add_initializer() = float_tensor({2}, {7, 8}, true);
    m.mutable_graph()->mutable_initializer(0)->set_name("K");
    add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {2, 3});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {3, 2});
    add_value(m.mutable_graph()->add_output(), "X", ox::TensorProto::FLOAT, {2, 3});    // a graph input
    add_value(m.mutable_graph()->add_output(), "K", ox::TensorProto::FLOAT, {2});       // an initializer
    add_value(m.mutable_graph()->add_output(), "xi", ox::TensorProto::FLOAT, {2, 3});   // an Identity of it
    const di::OnnxModel model = load(dir, m);
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
    // Mul, Sub, Reshape: no Identity runs as a node.
    EXPECT_EQ(op_nodes(*g.program), 3u);
    for (const Node& n : g.program->nodes()) EXPECT_NE(n.op, "activation") << n.name;
    EXPECT_NO_THROW(g.program->node_index("scale"));   // Constant nodes keep their names
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, model.file);
    const std::vector<float> x = {1, 2, 3, -1, -2, -3};
    run.set_input("X", HostTensor::from_floats(Shape{2, 3}, x));
    run.infer();
    expect_near(run.output(0), Shape{3, 2}, {0.5f, 3.5f, 8.5f, -1.5f, -4.5f, -9.5f});
    expect_near(run.output(1), Shape{2, 3}, x);
    expect_near(run.output(2), Shape{2}, {7, 8});
    expect_near(run.output(3), Shape{2, 3}, x);
}

// Constant folding: with a static input, Shape -> Gather -> Concat (the
// reshape target) is computed at import and only the Reshape runs; with every
// input dim dynamic the same subgraph stays in the program and runs.
TEST(OnnxGraph, ShapeSubgraphOfStaticInputs_FoldsAtImportAndRunsWhenDynamic) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    add_node(m, "Shape", {"X"}, {"s"}, "shape");
    add_node(m, "Gather", {"s", "zero"}, {"n"}, "first_dim");
    add_node(m, "Concat", {"n", "minus_one"}, {"target"}, "target")->add_attribute()->set_name("axis");
    m.mutable_graph()->mutable_node(2)->mutable_attribute(0)->set_type(ox::AttributeProto::INT);
    m.mutable_graph()->mutable_node(2)->mutable_attribute(0)->set_i(0);
    add_node(m, "Reshape", {"X", "target"}, {"Y"}, "reshape");
    for (const auto& [name, v] : std::vector<std::pair<std::string, int64_t>>{{"zero", 0}, {"minus_one", -1}}) {
        ox::TensorProto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(ox::TensorProto::INT64);
        t->add_dims(1);   // [1]: Gather keeps a dim, Concat joins two
        t->add_int64_data(v);
    }
    add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {2, 3, 4});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {2, 12});
    const di::OnnxModel model = load(dir, m);
    for (bool dynamic : {false, true}) {
        SCOPED_TRACE(dynamic ? "dynamic" : "static");
        di::ImportOptions io;
        io.dynamic_inputs = dynamic;
        const di::ImportedGraph g = di::import_graph(test::registry(), model, io);
        ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
        EXPECT_EQ(g.folded, dynamic ? 0u : 3u);
        EXPECT_EQ(op_nodes(*g.program), dynamic ? 4u : 1u);
        di::GraphRunner run(g, test::engine(), NetworkOptions{}, model.file);
        const HostTensor x = test::random_tensor(DataType::f32, Shape{2, 3, 4}, 3);
        run.set_input("X", x);
        run.infer();
        const HostTensor y = run.output(0);
        EXPECT_EQ(y.shape(), (Shape{2, 12}));
        for (size_t i = 0; i < x.count(); ++i) EXPECT_EQ(y.as<float>()[i], x.as<float>()[i]);
    }
}

// How a Gelu's subgraph is spelled (onnx_patterns.cpp): PyTorch's export
// Mul(Mul(x, Add(Erf(Div(x, sqrt 2)), 1)), 0.5), or Mul(Mul(x, 0.5), ...)
// with Mul(x, 1/sqrt 2); its scalars as initializers or Constant nodes.
struct GeluSpelling {
    bool half_first = false;       // Mul(Mul(x, 0.5), a), else Mul(Mul(x, a), 0.5)
    bool mul_inv_sqrt2 = false;    // Mul(x, 1/sqrt 2), else Div(x, sqrt 2)
    bool constant_nodes = false;   // the scalars from Constant nodes, else initializers
    float sqrt2 = 1.41421356f;     // another value: not a Gelu
    bool erf_output_too = false;   // the Erf's output also a graph output
};

ox::ModelProto gelu_model(const GeluSpelling& g) {
    ox::ModelProto m = empty_model();
    auto scalar = [&](const std::string& name, float v) {
        if (g.constant_nodes) {
            auto* c = add_node(m, "Constant", {}, {name}, name + "_node");
            auto* a = c->add_attribute();
            a->set_name("value");
            a->set_type(ox::AttributeProto::TENSOR);
            *a->mutable_t() = float_tensor({}, {v}, true);
        } else {
            ox::TensorProto* t = m.mutable_graph()->add_initializer();
            *t = float_tensor({}, {v}, true);
            t->set_name(name);
        }
    };
    scalar("half", 0.5f);
    scalar("one", 1.0f);
    if (g.mul_inv_sqrt2) {
        scalar("inv_sqrt2", 1.0f / g.sqrt2);
        add_node(m, "Mul", {"inv_sqrt2", "X"}, {"d"}, "scale");
    } else {
        scalar("sqrt2", g.sqrt2);
        add_node(m, "Div", {"X", "sqrt2"}, {"d"}, "scale");
    }
    add_node(m, "Erf", {"d"}, {"e"}, "erf");
    add_node(m, "Add", {"one", "e"}, {"a"}, "plus_one");
    if (g.half_first) {
        add_node(m, "Mul", {"X", "half"}, {"h"}, "halve");
        add_node(m, "Mul", {"a", "h"}, {"Y"}, "gelu_out");
    } else {
        add_node(m, "Mul", {"X", "a"}, {"p"}, "times_x");
        add_node(m, "Mul", {"p", "half"}, {"Y"}, "gelu_out");
    }
    add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    if (g.erf_output_too) add_value(m.mutable_graph()->add_output(), "e", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    return m;
}

// An imported subgraph spelling one activation: `fused` subgraphs became
// one node (then node `last`, activation `func`), else its `nodes` stay.
void expect_one_activation(const di::ImportedGraph& g, size_t fused, size_t nodes, const std::string& last,
                           const std::string& func) {
    ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
    EXPECT_EQ(g.fused, fused);
    EXPECT_EQ(op_nodes(*g.program), fused ? 1u : nodes);
    if (fused) {
        const Node& n = g.program->nodes()[g.program->node_index(last)];
        EXPECT_EQ(n.op, "activation");
        EXPECT_EQ(n.attrs.get_string("func"), func);
    }
}

// Runs the imported graph of Y = f(X), X [N, 5], over changing N on one
// network: Y matches f element by element (x in [-4, 4]).
void expect_unary_values(const di::ImportedGraph& g, const di::OnnxModel& model, uint64_t seed,
                         const std::function<double(double)>& f) {
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, model.file);
    for (int64_t n : {3, 1, 7, 3}) {
        SCOPED_TRACE("N = " + std::to_string(n));
        const HostTensor x = test::random_tensor(DataType::f32, Shape{n, 5}, seed++, -4, 4);
        std::vector<float> want;
        for (size_t i = 0; i < x.count(); ++i) want.push_back(static_cast<float>(f(x.as<float>()[i])));
        run.set_input("X", x);
        run.infer();
        expect_near(run.output(0), Shape{n, 5}, want);
    }
}

// Imports the spelling, checks how many subgraphs became one op and that the
// output is the subgraph's value over changing N on one network.
void expect_gelu_import(const GeluSpelling& spelling, size_t fused) {
    TempDir dir;
    const di::OnnxModel model = load(dir, gelu_model(spelling));
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    expect_one_activation(g, fused, 5, "gelu_out", "gelu");
    EXPECT_EQ(g.ops.size(), model.nodes.size());   // the model's own ops
    expect_unary_values(g, model, 5, [&](double v) { return 0.5 * v * (1.0 + std::erf(v / double(spelling.sqrt2))); });
}

TEST(OnnxGraph, GeluSubgraphs_ImportAsOneActivation) {
    for (const bool half_first : {false, true})
        for (const bool mul_inv_sqrt2 : {false, true}) {
            GeluSpelling s;
            s.half_first = half_first;
            s.mul_inv_sqrt2 = mul_inv_sqrt2;
            s.constant_nodes = half_first;
            SCOPED_TRACE(std::string(half_first ? "half first" : "half last") + (mul_inv_sqrt2 ? ", Mul" : ", Div"));
            expect_gelu_import(s, 1);
        }
}

TEST(OnnxGraph, SubgraphsThatAreNoGelu_StayAsTheyAre) {
    GeluSpelling other_constant;
    other_constant.sqrt2 = 1.7320508f;   // x / sqrt 3
    expect_gelu_import(other_constant, 0);
    // An intermediate tensor read outside the subgraph keeps every node.
    TempDir dir;
    GeluSpelling shared;
    shared.erf_output_too = true;
    const di::OnnxModel model = load(dir, gelu_model(shared));
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
    EXPECT_EQ(g.fused, 0u);
    EXPECT_EQ(op_nodes(*g.program), 5u);
}

// The tanh form of Gelu, as GPT-2's gelu_new exports: Mul(Mul(x, 0.5),
// Add(Tanh(Mul(Add(x, Mul(Pow(x, 3), 0.044715)), sqrt(2/pi))), 1)), or
// Mul(Mul(x, u), 0.5), with x^3 as Mul(x, Mul(x, x)) and operands swapped.
struct GeluTanhSpelling {
    bool pow = true;          // Pow(x, 3), else Mul(x, Mul(x, x))
    bool half_first = true;   // Mul(Mul(x, 0.5), u), else Mul(Mul(x, u), 0.5)
    bool swapped = false;     // constants and x first in their Muls and Adds
    float coef = 0.044715f;   // another value: not a Gelu
    bool tanh_output_too = false;
};

ox::ModelProto gelu_tanh_model(const GeluTanhSpelling& g) {
    ox::ModelProto m = empty_model();
    auto scalar = [&](const std::string& name, float v) {
        ox::TensorProto* t = m.mutable_graph()->add_initializer();
        *t = float_tensor({}, {v}, true);
        t->set_name(name);
    };
    auto ordered = [&](const std::string& a, const std::string& b) {
        return g.swapped ? std::vector<std::string>{b, a} : std::vector<std::string>{a, b};
    };
    scalar("three", 3.0f);
    scalar("coef", g.coef);
    scalar("k", 0.7978845608f);
    scalar("one", 1.0f);
    scalar("half", 0.5f);
    if (g.pow) {
        add_node(m, "Pow", {"X", "three"}, {"c"}, "cube");
    } else {
        add_node(m, "Mul", {"X", "X"}, {"sq"}, "square");
        add_node(m, "Mul", ordered("sq", "X"), {"c"}, "cube");
    }
    add_node(m, "Mul", ordered("c", "coef"), {"cm"}, "times_coef");
    add_node(m, "Add", ordered("cm", "X"), {"a"}, "plus_x");
    add_node(m, "Mul", ordered("a", "k"), {"s"}, "times_k");
    add_node(m, "Tanh", {"s"}, {"t"}, "tanh");
    add_node(m, "Add", ordered("t", "one"), {"u"}, "plus_one");
    if (g.half_first) {
        add_node(m, "Mul", ordered("X", "half"), {"h"}, "halve");
        add_node(m, "Mul", ordered("h", "u"), {"Y"}, "gelu_out");
    } else {
        add_node(m, "Mul", ordered("X", "u"), {"p"}, "times_x");
        add_node(m, "Mul", ordered("p", "half"), {"Y"}, "gelu_out");
    }
    add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    if (g.tanh_output_too) add_value(m.mutable_graph()->add_output(), "t", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    return m;
}

void expect_gelu_tanh_import(const GeluTanhSpelling& spelling, size_t fused) {
    TempDir dir;
    const di::OnnxModel model = load(dir, gelu_tanh_model(spelling));
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    expect_one_activation(g, fused, spelling.pow ? 8 : 9, "gelu_out", "gelu_tanh");
    expect_unary_values(g, model, 25, [&](double v) {
        return 0.5 * v * (1.0 + std::tanh(0.7978845608028654 * (v + double(spelling.coef) * v * v * v)));
    });
}

TEST(OnnxGraph, GeluTanhSubgraphs_ImportAsOneActivation) {
    for (const bool pow : {true, false})
        for (const bool half_first : {true, false}) {
            GeluTanhSpelling s;
            s.pow = pow;
            s.half_first = half_first;
            s.swapped = pow != half_first;
            SCOPED_TRACE(std::string(pow ? "Pow" : "Mul(x, Mul(x, x))") +
                         (half_first ? ", half first" : ", half last"));
            expect_gelu_tanh_import(s, 1);
        }
}

TEST(OnnxGraph, SubgraphsThatAreNoGeluTanh_StayAsTheyAre) {
    GeluTanhSpelling other_coef;
    other_coef.coef = 0.05f;
    expect_gelu_tanh_import(other_coef, 0);
    GeluTanhSpelling shared;   // the Tanh's output is read outside the subgraph
    shared.tanh_output_too = true;
    TempDir dir;
    const di::OnnxModel model = load(dir, gelu_tanh_model(shared));
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
    EXPECT_EQ(g.fused, 0u);
    EXPECT_EQ(op_nodes(*g.program), 8u);
}

// Mul(x, Sigmoid(x)), as PyTorch exports nn.SiLU: `sigmoid_first` puts the
// Sigmoid's output first in the Mul; `other` feeds the Mul another tensor
// than the Sigmoid's input; `sigmoid_output_too` makes the Sigmoid's output
// a graph output as well.
struct SwishSpelling {
    bool sigmoid_first = false, other = false, sigmoid_output_too = false;
};

ox::ModelProto swish_model(const SwishSpelling& w) {
    ox::ModelProto m = empty_model();
    add_node(m, "Sigmoid", {"X"}, {"s"}, "gate");
    const std::string x = w.other ? "Z" : "X";
    add_node(m, "Mul", w.sigmoid_first ? std::vector<std::string>{"s", x} : std::vector<std::string>{x, "s"}, {"Y"},
             "silu_out");
    add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    if (w.other) add_value(m.mutable_graph()->add_input(), "Z", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    if (w.sigmoid_output_too) add_value(m.mutable_graph()->add_output(), "s", ox::TensorProto::FLOAT, {0, 5}, {"N"});
    return m;
}

// Imports the spelling, checks whether it became one silu activation and
// that the output is x * sigmoid(x) (or z * sigmoid(x)) over changing N on
// one network.
void expect_swish_import(const SwishSpelling& spelling, bool fused) {
    TempDir dir;
    const di::OnnxModel model = load(dir, swish_model(spelling));
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    expect_one_activation(g, fused ? 1 : 0, 2, "silu_out", "silu");
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, model.file);
    uint64_t seed = 15;
    for (int64_t n : {3, 1, 7, 3}) {
        SCOPED_TRACE("N = " + std::to_string(n));
        const HostTensor x = test::random_tensor(DataType::f32, Shape{n, 5}, seed++, -6, 6);
        const HostTensor z = test::random_tensor(DataType::f32, Shape{n, 5}, seed++, -6, 6);
        std::vector<float> want;
        for (size_t i = 0; i < x.count(); ++i) {
            const double v = x.as<float>()[i], f = spelling.other ? z.as<float>()[i] : v;
            want.push_back(static_cast<float>(f / (1.0 + std::exp(-v))));
        }
        run.set_input("X", x);
        if (spelling.other) run.set_input("Z", z);
        run.infer();
        expect_near(run.output(0), Shape{n, 5}, want);
    }
}

TEST(OnnxGraph, SiluSubgraphs_ImportAsOneActivation) {
    for (const bool sigmoid_first : {false, true}) {
        SwishSpelling s;
        s.sigmoid_first = sigmoid_first;
        SCOPED_TRACE(sigmoid_first ? "Mul(sigmoid, x)" : "Mul(x, sigmoid)");
        expect_swish_import(s, true);
    }
}

TEST(OnnxGraph, SubgraphsThatAreNoSilu_StayAsTheyAre) {
    SwishSpelling other;   // z * sigmoid(x): a gate, not silu
    other.other = true;
    expect_swish_import(other, false);
    SwishSpelling shared;   // the sigmoid is read outside the subgraph
    shared.sigmoid_output_too = true;
    expect_swish_import(shared, false);
}

TEST(OnnxGraph, InputsSharingADimParam_MustAgreeWhenSet) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    add_node(m, "Add", {"A", "B"}, {"Y"}, "sum");
    add_value(m.mutable_graph()->add_input(), "A", ox::TensorProto::FLOAT, {0, 3}, {"N"});
    add_value(m.mutable_graph()->add_input(), "B", ox::TensorProto::FLOAT, {0, 3}, {"N"});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {0, 3}, {"N"});
    const di::OnnxModel model = load(dir, m);
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, model.file);
    uint64_t seed = 10;
    for (int64_t n : {2, 5, 1}) {
        const HostTensor a = test::random_tensor(DataType::f32, Shape{n, 3}, seed++);
        const HostTensor b = test::random_tensor(DataType::f32, Shape{n, 3}, seed++);
        run.set_input("A", a);
        run.set_input("B", b);
        run.infer();
        std::vector<float> want(a.count());
        for (size_t i = 0; i < want.size(); ++i) want[i] = a.as<float>()[i] + b.as<float>()[i];
        SCOPED_TRACE("N = " + std::to_string(n));
        expect_near(run.output(0), Shape{n, 3}, want);
    }
    // Disagreeing within one run: refused when the second input is set.
    run.set_input("A", test::random_tensor(DataType::f32, Shape{2, 3}, 1));
    std::string e = error_of([&] { run.set_input("B", test::random_tensor(DataType::f32, Shape{3, 3}, 2)); });
    for (const char* part : {"'A'", "'B'", "dim_param 'N'", "model.onnx"})
        EXPECT_NE(e.find(part), std::string::npos) << e;
    // B kept from the last run (N = 1) while A changed to 2: refused by infer().
    e = error_of([&] { run.infer(); });
    for (const char* part : {"'A'", "'B'", "dim_param 'N'"}) EXPECT_NE(e.find(part), std::string::npos) << e;
    // A static dim that differs is the declared layout's error.
    EXPECT_NE(error_of([&] {
                  run.set_input("A", test::random_tensor(DataType::f32, Shape{2, 4}, 3));
              }).find("the model declares f32[?,3]"),
              std::string::npos);
}

TEST(OnnxGraph, NodeInputNobodyProduces_IsAnErrorNamingFileNodeAndTensor) {
    TempDir dir;
    ox::ModelProto m = unary_model("Relu");
    add_node(m, "Add", {"y", "ghost"}, {"z"}, "add");
    const std::string e = import_error(dir, m);
    EXPECT_NE(e.find("node 'add' (Add)"), std::string::npos) << e;
    EXPECT_NE(e.find("reads 'ghost', which no node produces"), std::string::npos) << e;
}

TEST(OnnxGraph, DuplicateOutputName_IsAnErrorNamingBothNodes) {
    TempDir dir;
    ox::ModelProto m = unary_model("Relu");
    m.mutable_graph()->mutable_node(0)->set_name("first");
    add_node(m, "Neg", {"x"}, {"y"}, "second");
    std::string e = import_error(dir, m);
    for (const char* part : {"'y' is produced twice", "node 'first' (Relu)", "node 'second' (Neg)"})
        EXPECT_NE(e.find(part), std::string::npos) << e;
    // Writing a graph input's name is the same mistake.
    ox::ModelProto w = unary_model("Relu");
    add_node(w, "Neg", {"y"}, {"x"}, "overwrite");
    e = import_error(dir, w);
    EXPECT_NE(e.find("node 'overwrite' (Neg) writes 'x', which is already a graph input"), std::string::npos) << e;
}

TEST(OnnxGraph, Cycle_IsAnErrorNamingTheNodesOnIt) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    add_node(m, "Add", {"x", "t2"}, {"t1"}, "p");
    add_node(m, "Relu", {"t1"}, {"t2"}, "q");
    add_node(m, "Neg", {"x"}, {"y"}, "r");
    add_value(m.mutable_graph()->add_input(), "x", ox::TensorProto::FLOAT, {2, 3});
    add_value(m.mutable_graph()->add_output(), "y", ox::TensorProto::FLOAT, {2, 3});
    const std::string e = import_error(dir, m);
    EXPECT_NE(e.find("cycle through nodes 'p', 'q'"), std::string::npos) << e;
    EXPECT_EQ(e.find("'r'"), std::string::npos) << e;
}

TEST(OnnxGraph, OpWithoutMapping_IsAnErrorNamingOpDomainAndOpset) {
    TempDir dir;
    ox::ModelProto m = unary_model("Relu", 2);
    auto* custom = m.mutable_graph()->mutable_node(1);
    custom->set_op_type("Frob");
    custom->set_domain("com.example");
    custom->set_name("f");
    auto* opset = m.add_opset_import();
    opset->set_domain("com.example");
    opset->set_version(3);
    std::string e = import_error(dir, m);
    for (const char* part :
         {"node 'f' (Frob)", "unknown ONNX op 'com.example.Frob'", "domain 'com.example'", "opset 3"})
        EXPECT_NE(e.find(part), std::string::npos) << e;
    // Unnamed, in the default domain: the generated name is op and index.
    ox::ModelProto d = unary_model("Relu", 2);
    d.mutable_graph()->mutable_node(1)->set_op_type("NoSuchOnnxOp");
    e = import_error(dir, d);
    for (const char* part : {"node 'NoSuchOnnxOp_1' (NoSuchOnnxOp)", "domain 'ai.onnx'", "opset 13"})
        EXPECT_NE(e.find(part), std::string::npos) << e;
}

// An import rule named "<domain>.<op>" (com.microsoft.MatMulNBits, in
// ops/matmul_nbits) maps that op of that domain only, sees that domain's
// opset, and the unknown-op error lists it under its domain.
TEST(OnnxMap, DomainQualifiedRule_MapsItsDomainOnly) {
    auto node = [](const std::string& domain, const std::string& op) {
        di::OnnxNode n;
        n.domain = domain;
        n.op_type = op;
        n.name = "q";
        n.outputs = {"y"};
        n.inputs = {"a", "b", "s"};
        return n;
    };
    const auto reg = test::registry();
    EXPECT_EQ(di::claimed_ops(*reg).at("com.microsoft.MatMulNBits"), "matmul_nbits");
    EXPECT_TRUE(di::has_rule(*reg, node("com.microsoft", "MatMulNBits")));
    EXPECT_FALSE(di::has_rule(*reg, node("", "MatMulNBits")));
    EXPECT_FALSE(di::has_rule(*reg, node("ai.onnx", "com.microsoft.MatMulNBits")));
    EXPECT_FALSE(di::has_rule(*reg, node("com.microsoft", "MatMul")));
    EXPECT_TRUE(di::has_rule(*reg, node("ai.onnx", "MatMul")));
    const std::string e = error_of([&] { di::require_rule(*reg, node("", "MatMulNBits"), 17); });
    for (const char* part : {"unknown ONNX op 'MatMulNBits'", "in domain 'ai.onnx': ", "MatMul,",
                             "in domain 'com.microsoft': MatMulNBits"})
        EXPECT_NE(e.find(part), std::string::npos) << e;

    std::map<std::string, di::OnnxAttr> attrs = {
        {"K", a_int(32)}, {"N", a_int(4)}, {"bits", a_int(4)}, {"block_size", a_int(32)}, {"accuracy_level", a_int(4)}};
    const std::vector<di::MapInput> in = {input({2, 32}), input({4, 1, 16}, DataType::u8), input({4})};
    di::OnnxNode q = node("com.microsoft", "MatMulNBits");
    q.attrs = attrs;
    const di::Mapped m = di::map_node(*reg, q, 1, in);
    ASSERT_TRUE(m.unsupported.empty()) << m.unsupported;
    EXPECT_EQ(m.op, "matmul_nbits");
    EXPECT_EQ(m.inputs, (std::vector<size_t>{0, 1, 2}));
    EXPECT_EQ(m.attrs.get_int("block_size"), 32);
    EXPECT_FALSE(m.attrs.get_bool("zero_points"));
    // g_idx (input 4) and 3-bit codes are refused with the reason.
    std::vector<di::MapInput> with_gidx = in;
    with_gidx.resize(5);
    with_gidx[4] = input({32}, DataType::i32);
    q.inputs = {"a", "b", "s", "", "g"};
    EXPECT_NE(di::map_node(*reg, q, 1, with_gidx).unsupported.find("g_idx"), std::string::npos);
    q.inputs = {"a", "b", "s"};
    q.attrs["bits"] = a_int(3);
    EXPECT_NE(di::map_node(*reg, q, 1, in).unsupported.find("bits 3"), std::string::npos);
}

TEST(OnnxGraph, NodeTheMapperRefuses_IsUnsupportedNamingTheNode) {
    TempDir dir;
    ox::ModelProto m = unary_model("Relu", 2);
    m.mutable_graph()->mutable_node(1)->set_name("odd");
    auto* a = m.mutable_graph()->mutable_node(1)->add_attribute();
    a->set_name("bogus");
    a->set_type(ox::AttributeProto::INT);
    a->set_i(1);
    const di::ImportedGraph g = di::import_graph(test::registry(), load(dir, m));
    EXPECT_NE(g.unsupported.find("node 'odd' (Relu): attribute 'bogus'"), std::string::npos) << g.unsupported;
    EXPECT_FALSE(g.program);
}

// External data: read from a file in the model's folder at offset/length;
// paths leaving the folder, lengths that are not the tensor's size and ranges
// beyond the file are errors naming the file.
// ImportOptions::program reaches the imported program: the transpose that
// feeds the MatMul folds into it by default and stays with the fold off.
TEST(OnnxGraph, ProgramOptions_ReachTheImportedProgram) {
    TempDir dir;
    ox::ModelProto m = empty_model();
    add_node(m, "Transpose", {"X"}, {"xt"}, "tr")->add_attribute()->CopyFrom([] {
        ox::AttributeProto a;
        a.set_name("perm");
        a.set_type(ox::AttributeProto::INTS);
        a.add_ints(1);
        a.add_ints(0);
        return a;
    }());
    add_node(m, "MatMul", {"xt", "W"}, {"Y"}, "mm");
    *m.mutable_graph()->add_initializer() = float_tensor({3, 2}, {1, -1, 0.5f, 2, -2, 0.25f}, true);
    m.mutable_graph()->mutable_initializer(0)->set_name("W");
    add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {3, 0}, {"", "N"});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {0, 2}, {"N"});
    const di::OnnxModel model = load(dir, m);
    const di::ImportedGraph folded = di::import_graph(test::registry(), model);
    ASSERT_TRUE(folded.unsupported.empty()) << folded.unsupported;
    EXPECT_EQ(folded.program->folded().size(), 1u);
    EXPECT_EQ(op_nodes(*folded.program), 1u);
    di::ImportOptions opt;
    opt.passes.set("fold_permutations", false);
    const di::ImportedGraph kept = di::import_graph(test::registry(), model, opt);
    EXPECT_TRUE(kept.program->folded().empty());
    EXPECT_EQ(op_nodes(*kept.program), 2u);
}

TEST(OnnxGraph, ExternalData_IsReadInsideTheModelFolderOnly) {
    TempDir dir;
    const std::vector<float> w = {1, 2, 3, 4, 5, 6};
    {
        std::ofstream f(dir.path / "weights.bin", std::ios::binary);
        const std::string pad(8, 'x');
        f << pad;
        f.write(reinterpret_cast<const char*>(w.data()), static_cast<std::streamsize>(w.size() * sizeof(float)));
    }
    auto model_with = [&](const std::string& location, const std::string& offset, const std::string& length) {
        ox::ModelProto m = empty_model();
        add_node(m, "MatMul", {"X", "W"}, {"Y"}, "mm");
        ox::TensorProto* t = m.mutable_graph()->add_initializer();
        t->set_name("W");
        t->set_data_type(ox::TensorProto::FLOAT);
        t->add_dims(3);
        t->add_dims(2);
        t->set_data_location(ox::TensorProto::EXTERNAL);
        for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
                 {"location", location}, {"offset", offset}, {"length", length}}) {
            if (v.empty()) continue;
            auto* e = t->add_external_data();
            e->set_key(k);
            e->set_value(v);
        }
        add_value(m.mutable_graph()->add_input(), "X", ox::TensorProto::FLOAT, {1, 3});
        add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {1, 2});
        write_proto(dir.path / "model.onnx", m);
        return (dir.path / "model.onnx").string();
    };
    const di::OnnxModel ok = di::load_model(model_with("weights.bin", "8", "24"));
    const HostTensor& got = ok.initializers.at("W");
    ASSERT_EQ(got.shape(), (Shape{3, 2}));
    for (size_t i = 0; i < w.size(); ++i) EXPECT_EQ(got.as<float>()[i], w[i]);

    // Each: location, offset, length, what the message says, the field it names.
    const std::vector<std::tuple<std::string, std::string, std::string, std::string, std::string>> bad = {
        {"../weights.bin", "0", "", "inside the model's folder", "location"},
        {"sub/../../weights.bin", "0", "", "no '..'", "location"},
        {(dir.path / "weights.bin").string(), "0", "", "inside the model's folder", "location"},
        {"weights.bin", "8", "20", "length 20 is not the 24 bytes its dims [3,2] of f32 need", "length"},
        {"weights.bin", "16", "", "[16, +24) lies beyond the end of the 32-byte file", "offset"},
        {"weights.bin", "33", "", "[33, +24) lies beyond the end of the 32-byte file", "offset"},
        {"weights.bin", "-1", "", "offset '-1' is not an integer >= 0", "offset"},
        {"missing.bin", "0", "", "cannot open external data file", "location"},
    };
    const std::string model_file = (dir.path / "model.onnx").string();
    for (const auto& c : bad) {
        const auto& [location, offset, length, want, field] = c;
        // (C++17 lambdas capture no structured binding: copies.)
        const std::string loc = location, off = offset, len = length;
        const std::string e = error_of([&] { di::load_model(model_with(loc, off, len)); });
        SCOPED_TRACE(location + " " + offset + " " + length);
        EXPECT_NE(e.find(want), std::string::npos) << e;
        EXPECT_NE(e.find("tensor 'W'"), std::string::npos) << e;
        EXPECT_NE(e.find(model_file), std::string::npos) << e;
        EXPECT_NE(e.find("field 'external_data." + field + "'"), std::string::npos) << e;
    }
    EXPECT_NE(error_of([&] { di::load_model(model_with("missing.bin", "0", "")); }).find("missing.bin"),
              std::string::npos);
    // A link in the folder leading out of it, and a folder as the file.
    const fs::path outside = dir.path.string() + "_outside.bin";
    fs::copy_file(dir.path / "weights.bin", outside, fs::copy_options::overwrite_existing);
    fs::create_symlink(outside, dir.path / "link.bin");
    fs::create_directories(dir.path / "sub.bin");
    for (const auto& [location, want] : std::vector<std::pair<std::string, std::string>>{
             {"link.bin", "leads outside the model's folder"}, {"sub.bin", "is not a regular file"}}) {
        const std::string loc = location;
        const std::string e = error_of([&] { di::load_model(model_with(loc, "0", "")); });
        EXPECT_NE(e.find(want), std::string::npos) << e;
        EXPECT_NE(e.find("field 'external_data.location'"), std::string::npos) << e;
    }
    fs::remove(outside);
}

// A model whose external data file is larger than 4 GiB, made in a few
// milliseconds as a sparse file (ftruncate, then two small blocks written):
// a Gather table past 2^31 and a MatMul weight past 2^32 are read at their
// 64-bit offsets (only their own bytes: the load takes a few hundred KiB),
// and the graph's output is the one computed here from the written values.
TEST(OnnxGraph, ExternalDataPast4GiB_LoadsFromASparseFileAndRuns) {
    TempDir dir;
    constexpr uint64_t kGiB = uint64_t{1} << 30;
    constexpr int64_t kRows = 4096, kD = 16, kN = 5;
    const uint64_t table_at = 2 * kGiB + 12, weight_at = 4 * kGiB + 64, file_size = 4 * kGiB + (uint64_t{1} << 20);
    const fs::path bin = dir.path / "big.bin";
    {
        const int fd = ::open(bin.c_str(), O_CREAT | O_RDWR | O_TRUNC | O_CLOEXEC, 0644);
        ASSERT_GE(fd, 0) << std::strerror(errno);
        const bool sized = ::ftruncate(fd, static_cast<off_t>(file_size)) == 0;
        struct stat st {};
        const bool sparse = sized && ::fstat(fd, &st) == 0 && static_cast<uint64_t>(st.st_blocks) * 512 < (64u << 20);
        if (!sparse) {
            ::close(fd);
            GTEST_SKIP() << "the file system of " << dir.path << " cannot hold a sparse " << file_size << "-byte file";
        }
        ::close(fd);
    }
    // Rows 0, 7 and the last of the table hold values; every other row is a
    // hole of the sparse file and reads as zeros.
    std::vector<float> table(static_cast<size_t>(kRows * kD), 0.0f), weight(static_cast<size_t>(kD * kN));
    for (int64_t r : {int64_t{0}, int64_t{7}, kRows - 1})
        for (int64_t d = 0; d < kD; ++d)
            table[static_cast<size_t>(r * kD + d)] =
                static_cast<float>(r % 5 + 1) * 0.25f - static_cast<float>(d) * 0.125f;
    for (size_t i = 0; i < weight.size(); ++i) weight[i] = static_cast<float>(static_cast<int>(i % 7) - 3) * 0.5f;
    {
        const int fd = ::open(bin.c_str(), O_WRONLY | O_CLOEXEC);
        ASSERT_GE(fd, 0);
        const auto put = [&](uint64_t at, const void* p, size_t n) {
            ASSERT_EQ(::pwrite(fd, p, n, static_cast<off_t>(at)), static_cast<ssize_t>(n));
        };
        for (int64_t r : {int64_t{0}, int64_t{7}, kRows - 1})
            put(table_at + static_cast<uint64_t>(r * kD) * 4, &table[static_cast<size_t>(r * kD)], kD * 4);
        put(weight_at, weight.data(), weight.size() * 4);
        ::close(fd);
    }
    ox::ModelProto m = empty_model();
    add_node(m, "Gather", {"E", "idx"}, {"rows"}, "lookup");
    add_node(m, "MatMul", {"rows", "W"}, {"Y"}, "mm");
    auto external = [&](const std::string& name, std::vector<int64_t> dims, uint64_t at) {
        ox::TensorProto* t = m.mutable_graph()->add_initializer();
        t->set_name(name);
        t->set_data_type(ox::TensorProto::FLOAT);
        uint64_t n = 4;
        for (int64_t d : dims) {
            t->add_dims(d);
            n *= static_cast<uint64_t>(d);
        }
        t->set_data_location(ox::TensorProto::EXTERNAL);
        for (const auto& [k, v] : std::vector<std::pair<std::string, std::string>>{
                 {"location", "big.bin"}, {"offset", std::to_string(at)}, {"length", std::to_string(n)}}) {
            auto* e = t->add_external_data();
            e->set_key(k);
            e->set_value(v);
        }
    };
    external("E", {kRows, kD}, table_at);
    external("W", {kD, kN}, weight_at);
    add_value(m.mutable_graph()->add_input(), "idx", ox::TensorProto::INT64, {0}, {"n"});
    add_value(m.mutable_graph()->add_output(), "Y", ox::TensorProto::FLOAT, {0, kN}, {"n"});
    const di::OnnxModel model = load(dir, m);
    const di::ImportedGraph g = di::import_graph(test::registry(), model);
    ASSERT_TRUE(g.unsupported.empty()) << g.unsupported;
    di::GraphRunner run(g, test::engine(), NetworkOptions{}, model.file);
    for (const std::vector<int64_t>& idx :
         {std::vector<int64_t>{7, 0, kRows - 1, 3}, std::vector<int64_t>{kRows - 1}}) {
        const auto n = static_cast<int64_t>(idx.size());
        std::vector<float> want(static_cast<size_t>(n * kN));
        for (int64_t i = 0; i < n; ++i)
            for (int64_t c = 0; c < kN; ++c) {
                double acc = 0;
                for (int64_t d = 0; d < kD; ++d)
                    acc += double(table[static_cast<size_t>(idx[static_cast<size_t>(i)] * kD + d)]) *
                           weight[static_cast<size_t>(d * kN + c)];
                want[static_cast<size_t>(i * kN + c)] = static_cast<float>(acc);
            }
        run.set_input("idx", HostTensor::from_int64(DataType::i64, Shape{n}, idx));
        run.infer();
        SCOPED_TRACE("n = " + std::to_string(n));
        expect_near(run.output(0), Shape{n, kN}, want);
    }
    // A tensor claiming more than the file holds past a 64-bit offset is
    // refused from the file's size, before anything is allocated.
    m.mutable_graph()->mutable_initializer(1)->mutable_external_data(1)->set_value(std::to_string(file_size - 16));
    m.mutable_graph()->mutable_initializer(1)->mutable_external_data(1)->set_key("offset");
    const std::string e = error_of([&] { load(dir, m); });
    EXPECT_NE(e.find("lies beyond the end of the " + std::to_string(file_size) + "-byte file"), std::string::npos) << e;
}

#else

TEST(OnnxTest, BuiltWithoutOnnx_Skipped) { GTEST_SKIP() << "dynrt was built without the ONNX protobuf headers"; }

#endif

// ---- hostile input (docs/errors.md) --------------------------------------------------

TEST(OnnxHostile, TensorClaimingMoreThanItHolds_IsRefusedBeforeAllocating) {
    // 2^40 floats (4 TiB) claimed by a few bytes: refused from the dims, nothing
    // allocated (allocating first fails with bad_alloc, not a dynrt::Error).
    for (bool raw : {false, true}) {
        ox::TensorProto t;
        t.set_name("huge");
        t.add_dims(int64_t{1} << 40);
        t.set_data_type(ox::TensorProto::FLOAT);
        if (raw) t.set_raw_data(std::string(16, '\0'));
        try {
            di::parse_tensor(t.SerializeAsString(), "huge.pb");
            ADD_FAILURE() << "no error";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find("huge.pb"), std::string::npos) << m;
            EXPECT_NE(m.find(raw ? "16 bytes of raw_data" : "holds 0 values"), std::string::npos) << m;
        }
    }
    // Past 2^60 elements: an error naming the dims.
    ox::TensorProto t;
    t.add_dims(int64_t{1} << 40);
    t.add_dims(int64_t{1} << 40);
    t.set_data_type(ox::TensorProto::FLOAT);
    EXPECT_THROW(di::parse_tensor(t.SerializeAsString(), "wrap.pb"), Error);
}

TEST(OnnxHostile, NodesWithTooFewInputs_AreErrorsNamingNodeAndOp) {
    const std::vector<std::tuple<std::string, std::vector<di::MapInput>, std::string>> cases = {
        {"MatMul", {input({2, 3})}, "has 1 input; MatMul takes 2 inputs"},
        {"Gemm", {input({2, 3})}, "has 1 input; Gemm takes 2..3 inputs"},
        {"Conv", {input({1, 1, 4, 4})}, "has 1 input; Conv takes 2..3 inputs"},
        {"Gather", {input({4})}, "has 1 input; Gather takes 2 inputs"},
        {"Add", {input({4}), input({4}), input({4})}, "has 3 inputs; Add takes 2 inputs"},
        {"MatMul", {input({2, 3}), di::MapInput{}}, "has no input 1"},
    };
    for (const auto& [op, in, want] : cases) {
        try {
            map(op, {}, in);
            ADD_FAILURE() << op << ": no error";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find(want), std::string::npos) << m;
            EXPECT_EQ(e.context().op, op) << m;
            EXPECT_EQ(e.context().node, op) << m;   // unnamed: the op type names it
        }
    }
    // The model files of the fuzz regression corpus: an Error, not a crash.
    for (const char* f : {"matmul_one_input.onnx", "gemm_one_input.onnx", "conv_one_input.onnx"}) {
        const di::OnnxModel m = di::load_model(std::string(DYNRT_SOURCE_DIR "/fuzz/regressions/onnx/") + f);
        ASSERT_EQ(m.nodes.size(), 1u) << f;
        std::vector<di::MapInput> in(m.nodes[0].inputs.size());
        for (auto& i : in) {
            i.present = true;
            i.layout = Layout(m.inputs[0].shape, DataType::f32);
        }
        try {
            di::map_node(*test::registry(), m.nodes[0], m.opset, in);
            ADD_FAILURE() << f << ": no error";
        } catch (const Error& e) {
            EXPECT_NE(std::string(e.what()).find("_one_input' (" + m.nodes[0].op_type + ") has 1 input"),
                      std::string::npos)
                << e.what();
        }
    }
}

// An attribute of the wrong type used to be read as 0 (the field of the type
// the rule wanted): Softmax axis=1.0 normalised over axis 0. It is an error
// naming node, op, attribute, expected and found type, as in onnxruntime.
TEST(OnnxHostile, AttributeOfTheWrongType_IsAnErrorNamingBothTypes) {
    const std::vector<std::tuple<std::string, std::string, di::OnnxAttr, std::string>> cases = {
        {"Softmax", "axis", a_float(1.0), "attribute 'axis' is FLOAT, Softmax expects INT"},
        {"Flatten", "axis", a_str("2"), "attribute 'axis' is STRING, Flatten expects INT"},
        {"Elu", "alpha", a_int(2), "attribute 'alpha' is INT, Elu expects FLOAT"},
        {"Transpose", "perm", a_int(1), "attribute 'perm' is INT, Transpose expects INTS"},
        {"Gelu", "approximate", a_ints({1}), "attribute 'approximate' is INTS, Gelu expects STRING"},
    };
    for (const auto& [op, name, attr, want] : cases) {
        try {
            map(op, {{name, attr}}, {input({2, 3, 4})}, 20);
            ADD_FAILURE() << op << " " << name << ": no error";
        } catch (const Error& e) {
            const std::string m = e.what();
            EXPECT_NE(m.find(want), std::string::npos) << m;
            EXPECT_EQ(e.context().node, op) << m;
            EXPECT_EQ(e.context().op, op) << m;
            EXPECT_EQ(e.context().field, name) << m;
        }
    }
    // The right types still map, to the values given.
    EXPECT_EQ(map("Softmax", {{"axis", a_int(1)}}, {input({2, 3, 4})}).attrs.get_int("axis"), 1);
    EXPECT_EQ(map("Flatten", {{"axis", a_int(2)}}, {input({2, 3, 4})}).attrs.get_int("axis"), 2);
    EXPECT_DOUBLE_EQ(map("Elu", {{"alpha", a_float(0.25)}}, {input({3})}).attrs.get_float("alpha"), 0.25);
}

TEST(OnnxHostile, AttributeOfTheWrongTypeInAModel_NamesTheModelFile) {
    TempDir dir;
    ox::ModelProto m = unary_model("Softmax");
    auto* node = m.mutable_graph()->mutable_node(0);
    node->set_name("sm");
    auto* a = node->add_attribute();
    a->set_name("axis");
    a->set_type(ox::AttributeProto::FLOAT);
    a->set_f(1.0f);
    const std::string e = import_error(dir, m);   // checks the model file is named
    for (const char* part : {"node 'sm' (Softmax)", "field 'axis'", "is FLOAT, Softmax expects INT"})
        EXPECT_NE(e.find(part), std::string::npos) << e;
    // The same attribute as an INT imports.
    a->set_type(ox::AttributeProto::INT);
    a->clear_f();
    a->set_i(1);
    const di::ImportedGraph g = di::import_graph(test::registry(), load(dir, m));
    EXPECT_TRUE(g.unsupported.empty()) << g.unsupported;
    EXPECT_TRUE(g.program);
}

TEST(OnnxHostile, NonRegularFiles_AreRefused) {
    try {
        di::read_tensor("/dev/zero");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("the tensor file is a character device"), std::string::npos) << e.what();
    }
    try {
        di::load_model(DYNRT_SOURCE_DIR "/fuzz/regressions/onnx");
        ADD_FAILURE() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("the model file is a directory"), std::string::npos) << e.what();
    }
}

// A model importing an opset newer than the import rules know, or none of the
// default domain, used to run as the current rules read it (opset 99 as
// whatever each rule does for its newest). Refused when the model is read,
// naming the file, the opset and the newest supported one, as onnxruntime
// refuses opsets it does not know.
TEST(OnnxHostile, UnknownOrMissingDefaultOpset_IsRefusedNamingFileOpsetAndNewest) {
    TempDir dir;
    const std::string file = (dir.path / "model.onnx").string();
    const std::string newest = std::to_string(di::kNewestOnnxOpset);
    auto with_opset = [](int64_t version, const std::string& domain) {
        ox::ModelProto m = unary_model("Relu");
        m.clear_opset_import();
        auto* o = m.add_opset_import();
        o->set_domain(domain);
        o->set_version(version);
        return m;
    };
    // The newest known opset, spelt "" or "ai.onnx", loads and imports.
    for (const char* domain : {"", "ai.onnx"}) {
        const di::OnnxModel m = load(dir, with_opset(di::kNewestOnnxOpset, domain));
        EXPECT_EQ(m.opset, di::kNewestOnnxOpset) << domain;
        EXPECT_NO_THROW(di::import_graph(test::registry(), m)) << domain;
    }
    for (const int64_t bad : {di::kNewestOnnxOpset + 1, int64_t{99}, int64_t{0}, int64_t{-3}}) {
        const std::string e = error_of([&] { load(dir, with_opset(bad, "")); });
        for (const std::string& part : std::vector<std::string>{
                 file, "field 'opset_import'", "ai.onnx opset " + std::to_string(bad), "ai.onnx opsets 1.." + newest})
            EXPECT_NE(e.find(part), std::string::npos) << bad << ": " << e;
        if (bad > di::kNewestOnnxOpset) {
            EXPECT_NE(e.find("the newest supported is " + newest), std::string::npos) << e;
        }
    }
    // No default-domain import while an ai.onnx node needs one: none at all,
    // or another domain's only.
    ox::ModelProto none = unary_model("Relu");
    none.clear_opset_import();
    std::string e = error_of([&] { load(dir, none); });
    for (const std::string& part :
         std::vector<std::string>{file, "imports no opset of the default domain", "lists nothing", newest})
        EXPECT_NE(e.find(part), std::string::npos) << e;
    e = error_of([&] { load(dir, with_opset(1, "com.example")); });
    for (const std::string& part : std::vector<std::string>{file, "imports no opset of the default domain",
                                                            "lists only com.example 1", "node 'Relu' (Relu)"})
        EXPECT_NE(e.find(part), std::string::npos) << e;
    // A model whose nodes are all of another domain (the node tests of
    // ai.onnx.preview.training) needs no ai.onnx opset: it loads.
    ox::ModelProto other = with_opset(1, "com.example");
    other.mutable_graph()->mutable_node(0)->set_domain("com.example");
    EXPECT_EQ(load(dir, other).opsets.at("com.example"), 1);
}
