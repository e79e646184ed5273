// The cpu engine's optimised impls writing into a padded output, as a
// producer of an in-place concat does (docs/architecture.md, "In-place
// concat"; plugins/cpu/sdk/include/dynrt/cpu_padded.hpp). For every
// optimised cpu impl of activation, eltwise, fully_connected, gemm and
// transpose: its check accepts outputs padded along one axis, as one dense
// block (every dim before the axis 1) and with rows interleaved with the
// padding (a batch, heads before the axis, the last axis); what it writes
// matches the reference impl on a dense output, and every padding element
// keeps the bytes it had. A dynamic impl runs a sequence of paddings on one
// state (the concat grows: only the offset moves, or the pitch too). The
// checks of impls that write dense blocks only refuse the other paddings.
#include <gtest/gtest.h>

#include <cstring>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/registry.hpp"
#include "op_test.hpp"
#include "test_support.hpp"

using namespace dynrt;

namespace {

// A padding of the output along `axis`.
struct Pad {
    size_t axis;
    int64_t lower, upper;
};

struct Case {
    std::string name;
    std::string op;
    Attributes attrs;
    std::vector<Layout> inputs;
    bool constant_weights = false;
    // Paddings run one after another on one dynamic impl's state.
    std::vector<Pad> pads;
};

Layout padded(const Layout& l, const Pad& pad) {
    Layout p = l;
    const size_t rank = l.shape.rank();
    p.padding.lower.assign(rank, 0);
    p.padding.upper.assign(rank, 0);
    p.padding.lower[pad.axis] = pad.lower;
    p.padding.upper[pad.axis] = pad.upper;
    return p;
}

constexpr unsigned char kSentinel = 0xA5;   // the padding's bytes, before and after

struct Run {
    std::shared_ptr<Stream> stream;
    std::vector<MemoryPtr> inputs;
};

// Buffers holding `tensors`, on the cpu engine.
Run upload(const EnginePtr& eng, const std::vector<HostTensor>& tensors) {
    Run r;
    r.stream = eng->create_stream();
    for (const HostTensor& t : tensors) {
        auto buf = eng->allocate(t.bytes());
        buf->write(*r.stream, t.data(), 0, t.bytes());
        r.inputs.push_back(std::make_shared<Memory>(buf, t.layout()));
    }
    return r;
}

KernelParams params(const Case& c, const OpDefinition& def, const Attributes& attrs, const Layout& out,
                    const EnginePtr& eng) {
    KernelParams p;
    p.node = c.name;
    p.op = &def;
    p.attrs = &attrs;
    p.inputs = c.inputs;
    p.outputs = {out};
    p.engine = eng.get();
    p.constant_weights = c.constant_weights;
    return p;
}

// The bytes of a padded output: logical elements gathered, padding checked.
HostTensor read_padded(const std::vector<unsigned char>& bytes, const Layout& l) {
    const Shape s = l.get_shape(), ps = l.padded_shape();
    const size_t width = byte_size(l.dtype), rank = s.rank();
    const std::vector<size_t> st = strides_of(ps);
    HostTensor t(l.dtype, s);
    std::vector<bool> logical(ps.count(), false);
    for (size_t i = 0; i < s.count(); ++i) {
        size_t rest = i, at = 0;
        for (size_t d = rank; d-- > 0;) {
            const size_t k = rest % static_cast<size_t>(s[d]);
            rest /= static_cast<size_t>(s[d]);
            at += (k + static_cast<size_t>(l.padding.lower[d])) * st[d];
        }
        logical[at] = true;
        std::memcpy(static_cast<unsigned char*>(t.data()) + i * width, bytes.data() + at * width, width);
    }
    size_t touched = 0;
    for (size_t e = 0; e < ps.count(); ++e)
        if (!logical[e])
            for (size_t b = 0; b < width; ++b) touched += bytes[e * width + b] != kSentinel;
    EXPECT_EQ(touched, 0u) << "padding bytes written in " << l.to_string();
    return t;
}

// Runs `impl` into a padded output filled with kSentinel; the logical elements.
HostTensor run_padded(Impl& impl, ImplState* state, const KernelParams& p, const Run& in, const EnginePtr& eng) {
    const Layout& l = p.outputs[0];
    std::vector<unsigned char> bytes(l.bytes(), kSentinel);
    auto buf = eng->allocate(bytes.size());
    buf->write(*in.stream, bytes.data(), 0, bytes.size());
    std::vector<MemoryPtr> outs{std::make_shared<Memory>(buf, l)};
    ExecContext ctx{*in.stream, p, in.inputs, outs};
    ctx.state = state;
    impl.execute(ctx);
    in.stream->finish();
    buf->read(*in.stream, bytes.data(), 0, bytes.size());
    return read_padded(bytes, l);
}

HostTensor run_reference(const Registry& reg, const Case& c, const KernelParams& dense, const Run& in,
                         const EnginePtr& eng) {
    for (const RegisteredImpl* r : reg.impls(c.op, "cpu")) {
        if (!r->entry.reference || r->entry.shape_type != ShapeType::dynamic_shape) continue;
        auto impl = r->entry.create(dense);
        const Layout& l = dense.outputs[0];
        HostTensor out(l.dtype, l.get_shape());
        auto buf = eng->allocate(out.bytes());
        std::vector<MemoryPtr> outs{std::make_shared<Memory>(buf, l)};
        ExecContext ctx{*in.stream, dense, in.inputs, outs};
        impl->execute(ctx);
        in.stream->finish();
        buf->read(*in.stream, out.data(), 0, out.bytes());
        return out;
    }
    ADD_FAILURE() << "no reference impl of " << c.op;
    return {};
}

// Every optimised cpu impl of c.op that serves its dense output: accepts each
// padding and writes what the reference writes, padding untouched. Returns
// the impls that ran.
std::vector<std::string> check_case(const Case& c) {
    const auto reg = test::registry();
    const EnginePtr eng = test::engine("cpu");
    const OpDefinition& def = reg->op(c.op).def;
    const Attributes attrs = Attributes::validate(def.attrs, c.attrs);
    std::vector<HostTensor> tensors;
    for (size_t i = 0; i < c.inputs.size(); ++i)
        tensors.push_back(test::random_tensor(c.inputs[i].dtype, c.inputs[i].get_shape(), 11 + i));
    const Run in = upload(eng, tensors);
    const Layout out = test::infer_shapes(c.op, c.inputs, c.attrs).at(0);   // dense, static
    const KernelParams dense = params(c, def, attrs, out, eng);
    const HostTensor want = run_reference(*reg, c, dense, in, eng);
    const test::Tolerance tol = test::tolerance(out.dtype);
    std::vector<std::string> ran;
    for (const RegisteredImpl* r : reg->impls(c.op, "cpu")) {
        const ImplEntry& e = r->entry;
        if (e.reference || !e.check(dense).empty()) continue;
        SCOPED_TRACE(c.name + " " + e.name);
        ran.push_back(e.name);
        std::unique_ptr<Impl> dynamic_impl;
        std::unique_ptr<ImplState> state;
        for (const Pad& pad : c.pads) {
            const KernelParams p = params(c, def, attrs, padded(out, pad), eng);
            SCOPED_TRACE(p.outputs[0].to_string());
            const std::string why = e.check(p);
            EXPECT_EQ(why, "");
            if (!why.empty()) break;
            std::unique_ptr<Impl> static_impl;
            Impl* impl = nullptr;
            if (e.shape_type == ShapeType::dynamic_shape) {
                if (!dynamic_impl) {
                    dynamic_impl = e.create(p);
                    state = dynamic_impl->create_state();
                }
                impl = dynamic_impl.get();
            } else {
                static_impl = e.create(p);
                impl = static_impl.get();
            }
            const HostTensor got =
                run_padded(*impl, e.shape_type == ShapeType::dynamic_shape ? state.get() : nullptr, p, in, eng);
            test::expect_close(got, want, tol);
        }
    }
    return ran;
}

Attributes relu() { return test::attrs({{"func", std::string("relu")}}); }

// Paddings of a rank-3 output of dims [b, rows, n] along the rows: the
// concat grows (lower moves, upper shrinks, the padded extent grows).
std::vector<Pad> rows_pads() { return {{1, 0, 3}, {1, 2, 0}, {1, 5, 4}, {1, 1, 1}}; }

}   // namespace

TEST(CpuPaddedOutput, Activation_DenseBlockAndInterleavedRows) {
    for (const std::string func : {"relu", "gelu"}) {
        const Attributes a = test::attrs({{"func", func}});
        for (int64_t batch : {1, 2}) {
            const Case c{"act_" + func, "activation", a, {test::f32(Shape{batch, 3, 20})}, false, rows_pads()};
            EXPECT_EQ(check_case(c), (std::vector<std::string>{"cpu_opt_static", "cpu_opt_dynamic"}));
        }
    }
    // Padded along the last axis: runs of one row.
    const Case last{"act_last", "activation", relu(), {test::f32(Shape{2, 3, 5})}, false, {{2, 1, 2}, {2, 0, 3}}};
    EXPECT_EQ(check_case(last).size(), 2u);
}

TEST(CpuPaddedOutput, Eltwise_BroadcastRowsIntoInterleavedRows) {
    const Attributes add = test::attrs({{"mode", std::string("add")}});
    const Attributes mul = test::attrs({{"mode", std::string("mul")}});
    for (int64_t batch : {1, 2}) {
        const Layout x = test::f32(Shape{batch, 3, 20});
        for (const auto& [name, b] :
             std::vector<std::pair<std::string, Layout>>{{"same", x},
                                                         {"per_channel", test::f32(Shape{20})},
                                                         {"per_batch", test::f32(Shape{batch, 1, 20})},
                                                         {"per_row", test::f32(Shape{batch, 3, 1})}}) {
            const Case c{"add_" + name, "eltwise", add, {x, b}, false, rows_pads()};
            EXPECT_EQ(check_case(c), (std::vector<std::string>{"cpu_opt_static", "cpu_opt_dynamic"}));
        }
    }
    const Case last{
        "mul_last", "eltwise", mul, {test::f32(Shape{2, 3, 5}), test::f32(Shape{5})}, false, {{2, 1, 2}, {2, 3, 0}}};
    EXPECT_EQ(check_case(last).size(), 2u);
}

TEST(CpuPaddedOutput, FullyConnected_DenseBlockAndStridedRows) {
    for (int64_t batch : {1, 2}) {
        for (int64_t rows : {1, 3}) {
            for (bool constant : {true, false}) {
                const Case c{
                    "fc",         "fully_connected",
                    Attributes{}, {test::f32(Shape{batch, rows, 16}), test::f32(Shape{24, 16}), test::f32(Shape{24})},
                    constant,     rows_pads()};
                EXPECT_EQ(check_case(c), (std::vector<std::string>{"cpu_dnnl_static", "cpu_dnnl_dynamic"}));
            }
        }
    }
    const Case last{"fc_last",    "fully_connected",
                    Attributes{}, {test::f32(Shape{2, 3, 16}), test::f32(Shape{8, 16})},
                    true,         {{2, 0, 3}, {2, 2, 1}}};
    EXPECT_EQ(check_case(last).size(), 2u);
}

TEST(CpuPaddedOutput, Gemm_DenseBlockAndStridedRows) {
    const Attributes tb = test::attrs({{"transpose_b", true}});
    for (int64_t batch : {1, 2}) {
        const Case weights{"gemm_w",     "gemm",
                           Attributes{}, {test::f32(Shape{batch, 3, 16}), test::f32(Shape{16, 8})},
                           true,         rows_pads()};
        EXPECT_EQ(check_case(weights), (std::vector<std::string>{"cpu_dnnl_static", "cpu_dnnl_dynamic"}));
        const Case batched{"gemm_b", "gemm",     tb, {test::f32(Shape{batch, 3, 16}), test::f32(Shape{batch, 8, 16})},
                           false,    rows_pads()};
        EXPECT_EQ(check_case(batched), (std::vector<std::string>{"cpu_dnnl_static", "cpu_dnnl_dynamic"}));
    }
}

TEST(CpuPaddedOutput, Transpose_HeadsBeforeTheSequenceAxis) {
    // [B, S, H, D] -> [B, H, S, D], padded along S: an exported decoder's new
    // keys written into a [B, H, past + new, D] cache.
    const Attributes bhsd = test::attrs({{"perm", std::vector<int64_t>{0, 2, 1, 3}}});
    for (DataType t : {DataType::f32, DataType::i64, DataType::u8}) {
        const Case c{"kv", "transpose", bhsd, {Layout(Shape{1, 3, 4, 8}, t)}, false, {{2, 0, 2}, {2, 3, 0}, {2, 7, 1}}};
        EXPECT_EQ(check_case(c), (std::vector<std::string>{"cpu_opt_static", "cpu_opt_dynamic"}));
    }
    // The innermost input dim moves (the tiled loop), padded along rows or
    // along the last axis.
    const Attributes swap = test::attrs({{"perm", std::vector<int64_t>{0, 2, 1}}});
    for (int64_t batch : {1, 2}) {
        const Case c{"tiles", "transpose", swap, {test::f32(Shape{batch, 40, 35})}, false, rows_pads()};
        EXPECT_EQ(check_case(c).size(), 2u);
    }
    const Case last{"tiles_last", "transpose", swap, {test::f32(Shape{2, 40, 35})}, false, {{2, 1, 2}, {2, 0, 5}}};
    EXPECT_EQ(check_case(last).size(), 2u);
}

TEST(CpuPaddedOutput, DenseBlockOnlyImpls_RefuseInterleavedRows) {
    // softmax's optimised loop writes through HostCall: a dense block only.
    const auto reg = test::registry();
    const OpDefinition& def = reg->op("softmax").def;
    const Attributes attrs = Attributes::validate(def.attrs, test::attrs({{"axis", int64_t{-1}}}));
    size_t checked = 0;
    for (int64_t batch : {1, 2}) {
        const Layout x = test::f32(Shape{batch, 3, 20});
        KernelParams p;
        p.node = "sm";
        p.op = &def;
        p.attrs = &attrs;
        p.inputs = {x};
        p.outputs = {padded(x, {1, 2, 3})};
        for (const RegisteredImpl* r : reg->impls("softmax", "cpu")) {
            if (r->entry.reference) continue;
            const std::string why = r->entry.check(p);
            if (batch == 1) EXPECT_EQ(why, "") << r->entry.name;
            else EXPECT_NE(why, "") << r->entry.name;
            ++checked;
        }
    }
    EXPECT_GT(checked, 0u);
}
