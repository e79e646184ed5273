// HostCall maps only what a host impl reads or writes: an input or output is
// mapped on its first data access, once, and shapes come from the params. On
// a device a map waits for the queued work that produces the buffer, so
// shape_of, which reads no data, must map no input. Checked with a buffer that
// counts its maps.
#include <gtest/gtest.h>

#include <cstring>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "dynrt/implementation_map.hpp"
#include "dynrt/op_sdk.hpp"
#include "test_support.hpp"

namespace dynrt {
namespace {

class NullStream final : public Stream {
public:
    void finish() override {}
};

// Host storage that counts map() calls.
class CountingBuffer final : public Buffer {
public:
    explicit CountingBuffer(size_t size) : Buffer(size, std::make_shared<MemoryTracker>()), data_(size) {}
    void* map(Stream&) override {
        ++maps;
        return data_.data();
    }
    void unmap(Stream&) override { ++unmaps; }
    void write(Stream&, const void* src, size_t offset, size_t bytes) override {
        std::memcpy(data_.data() + offset, src, bytes);
    }
    void read(Stream&, void* dst, size_t offset, size_t bytes) override {
        std::memcpy(dst, data_.data() + offset, bytes);
    }
    char* data() { return data_.data(); }
    int maps = 0, unmaps = 0;

private:
    std::vector<char> data_;
};

struct Call {
    std::shared_ptr<CountingBuffer> in_buf, out_buf;
    MemoryPtr in, out;
};

Call make_call(const Layout& in, const Layout& out) {
    Call c;
    c.in_buf = std::make_shared<CountingBuffer>(in.bytes());
    c.out_buf = std::make_shared<CountingBuffer>(out.bytes());
    c.in = std::make_shared<Memory>(c.in_buf, in);
    c.out = std::make_shared<Memory>(c.out_buf, out);
    return c;
}

// Runs `op`'s host impl (both flavours) on one input of layout `in`.
void run_host_impls(const std::string& op, const Attributes& raw, const Layout& in, const Layout& out,
                    const std::function<void(const Call&)>& fill, const std::function<void(const Call&)>& check) {
    const auto reg = test::registry();
    const OpDefinition& def = reg->op(op).def;
    const Attributes attrs = Attributes::validate(def.attrs, raw);
    size_t ran = 0;
    for (const RegisteredImpl* c : reg->impls(op, "cpu")) {
        if (c->entry.impl_type != "cpu" || !c->entry.reference) continue;
        SCOPED_TRACE(c->entry.name);
        KernelParams p;
        p.node = "n";
        p.op = &def;
        p.attrs = &attrs;
        p.inputs = {in};
        p.outputs = {out};
        auto impl = c->entry.create(p);
        Call call = make_call(in, out);
        fill(call);
        NullStream stream;
        std::vector<MemoryPtr> ins{call.in}, outs{call.out};
        ExecContext ctx{stream, p, ins, outs};
        impl->execute(ctx);
        check(call);
        EXPECT_EQ(call.in_buf->unmaps, call.in_buf->maps);
        EXPECT_EQ(call.out_buf->unmaps, call.out_buf->maps);
        ++ran;
    }
    EXPECT_EQ(ran, 2u) << "cpu_ref_dynamic and cpu_ref_static";
}

TEST(HostCall, ShapeOfHostImpl_MapsNoInput) {
    const Layout in(Shape{2, 3, 5}, DataType::f32);
    const Layout out(Shape{3}, DataType::i64);
    run_host_impls(
        "shape_of", Attributes{}, in, out, [](const Call&) {},
        [](const Call& c) {
            EXPECT_EQ(c.in_buf->maps, 0) << "shape_of read no data but mapped its input";
            EXPECT_EQ(c.out_buf->maps, 1);
            std::vector<int64_t> dims(3);
            std::memcpy(dims.data(), c.out_buf->data(), 3 * sizeof(int64_t));
            EXPECT_EQ(dims, (std::vector<int64_t>{2, 3, 5}));
        });
}

// A kernel that reads element by element (get/set) maps each memory once.
TEST(HostCall, ElementwiseHostImpl_MapsEachMemoryOnce) {
    const Layout l(Shape{4, 7}, DataType::f32);
    Attributes a;
    a.set("func", std::string("relu"));
    run_host_impls(
        "activation", a, l, l,
        [](const Call& c) {
            for (size_t i = 0; i < 28; ++i) reinterpret_cast<float*>(c.in_buf->data())[i] = float(i) - 14.0f;
        },
        [](const Call& c) {
            EXPECT_EQ(c.in_buf->maps, 1);
            EXPECT_EQ(c.out_buf->maps, 1);
            for (size_t i = 0; i < 28; ++i)
                EXPECT_EQ(reinterpret_cast<const float*>(c.out_buf->data())[i], i > 14 ? float(i) - 14.0f : 0.0f);
        });
}

// The same through HostCall directly, with every accessor.
TEST(HostCall, EveryAccessor_MapsOnFirstUseOnly) {
    const Layout l(Shape{2, 2}, DataType::i32);
    Call c = make_call(l, l);
    for (int i = 0; i < 4; ++i) reinterpret_cast<int32_t*>(c.in_buf->data())[i] = i * 10;
    KernelParams p;
    p.node = "n";
    p.inputs = {l};
    p.outputs = {l};
    NullStream stream;
    std::vector<MemoryPtr> ins{c.in}, outs{c.out};
    ExecContext ctx{stream, p, ins, outs};
    {
        HostCall call(ctx);
        EXPECT_EQ(call.in_shape(0), Shape({2, 2}));
        EXPECT_EQ(call.out_shape(0), Shape({2, 2}));
        EXPECT_EQ(c.in_buf->maps + c.out_buf->maps, 0) << "constructing a HostCall maps nothing";
        EXPECT_EQ(call.get(0, 1), 10.0);
        EXPECT_EQ(call.get_ints(0), (std::vector<int64_t>{0, 10, 20, 30}));
        EXPECT_EQ(call.in<int32_t>(0)[3], 30);
        EXPECT_EQ(call.in_raw(0), static_cast<const void*>(c.in_buf->data()));
        EXPECT_EQ(c.in_buf->maps, 1);
        EXPECT_EQ(c.out_buf->maps, 0);
        call.set(0, 0, 7.0);
        call.out<int32_t>(0)[1] = 8;
        static_cast<int32_t*>(call.out_raw(0))[2] = 9;
        EXPECT_EQ(c.out_buf->maps, 1);
        EXPECT_EQ(c.in_buf->unmaps + c.out_buf->unmaps, 0);
    }
    EXPECT_EQ(c.in_buf->unmaps, 1);
    EXPECT_EQ(c.out_buf->unmaps, 1);
    const auto* o = reinterpret_cast<const int32_t*>(c.out_buf->data());
    EXPECT_EQ(o[0], 7);
    EXPECT_EQ(o[1], 8);
    EXPECT_EQ(o[2], 9);
}

// An absent optional input is nullptr without a map; an index past the inputs
// is an error.
TEST(HostCall, AbsentInputIsNullAndOutOfRangeIsAnError) {
    const Layout l(Shape{3}, DataType::f32);
    Call c = make_call(l, l);
    KernelParams p;
    p.node = "n";
    p.inputs = {l, l};
    p.outputs = {l};
    NullStream stream;
    std::vector<MemoryPtr> ins{c.in, nullptr}, outs{c.out};
    ExecContext ctx{stream, p, ins, outs};
    HostCall call(ctx);
    EXPECT_EQ(call.in_raw(1), nullptr);
    EXPECT_THROW(call.in_raw(2), Error);
    EXPECT_THROW(call.out_raw(1), Error);
    EXPECT_EQ(c.in_buf->maps, 0);
}

}   // namespace
}   // namespace dynrt
