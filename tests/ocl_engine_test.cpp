// The ocl device module and the OpenCL API of op modules: device choice,
// buffers, allocation limits, kernel builds (errors carry the build log), static
// and shape-agnostic launches against host results over tail sizes, shape_info
// packing, local-size choice and the disk binary cache (hit, corrupt entry).
// Device tests skip when the module is not built or no OpenCL platform exists;
// the host-only helpers are tested everywhere.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <functional>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/ocl_api.hpp"
#include "dynrt/registry.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace dynrt;

namespace {

// The build's module folder, or the first folder of DYNRT_MODULE_PATH (to run
// the test binary from another place, e.g. on a GPU machine).
std::string module_path() {
    const char* env = std::getenv("DYNRT_MODULE_PATH");
    std::string dir = env && *env ? std::string(env).substr(0, std::string(env).find(':')) : DYNRT_TEST_MODULE_DIR;
    return dir + "/libdynrt_ocl.so";
}
const std::string kModulePath = module_path();
const std::vector<size_t> kTailSizes = {1, 3, 13, 16, 17, 255, 257};

// y = a + alpha * b, bounds-checked (the global size is rounded up). The static
// build bakes the length in; the shape-agnostic one reads it from shape_info.
const char* kVectorAdd = R"CL(
__kernel void vector_add(OPTIONAL_SHAPE_INFO_ARG __global const float* a, __global const float* b,
                         __global float* out, float alpha) {
    const size_t i = get_global_id(0);
#if IS_DYNAMIC
    if (i >= (size_t)OUTPUT0_LENGTH) return;
#else
    if (i >= OUTPUT0_LENGTH) return;
#endif
    out[i] = a[i] + alpha * b[i];
}
)CL";

using test::EnvGuard;

bool contains(const std::string& s, const std::string& part) { return s.find(part) != std::string::npos; }

std::string error_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const Error& e) {
        return e.what();
    }
    ADD_FAILURE() << "expected a dynrt::Error";
    return {};
}

// The ocl module in a registry of its own (other modules are not needed).
Registry* ocl_registry() {
    static std::unique_ptr<Registry> reg = [] {
        auto r = std::make_unique<Registry>();
        if (fs::exists(kModulePath)) ModuleLoader::load_file(*r, kModulePath);
        return r;
    }();
    return reg->has_engine("ocl") ? reg.get() : nullptr;
}

EnginePtr make_engine(const std::string& device = "ocl") {
    EngineConfig cfg;
    cfg.device = device;
    return ocl_registry()->create_engine("ocl", cfg);
}

// Random floats in [-1, 1) from a fixed seed (no <random> distribution
// differences between standard libraries).
std::vector<float> pattern(size_t n, uint32_t seed) {
    std::vector<float> v(n);
    uint32_t s = seed;
    for (auto& x : v) {
        s = s * 1664525u + 1013904223u;
        x = static_cast<float>(s >> 8) / static_cast<float>(1u << 24) * 2.0f - 1.0f;
    }
    return v;
}

class OclEngineTest : public ::testing::Test {
protected:
    void SetUp() override {
        if (!ocl_registry()) GTEST_SKIP() << "the ocl module is not built (no OpenCL SDK)";
        try {
            engine_ = make_engine();
        } catch (const Error& e) {
            if (contains(e.what(), "no OpenCL platform")) GTEST_SKIP() << e.what();
            throw;
        }
        // A cache folder per test, so that counts start from nothing.
        const auto* info = ::testing::UnitTest::GetInstance()->current_test_info();
        cache_dir_ = fs::temp_directory_path() / ("dynrt-ocl-test-" + std::to_string(getpid()) + "-" + info->name());
        fs::remove_all(cache_dir_);
        setenv("DYNRT_CACHE_DIR", cache_dir_.c_str(), 1);
        // The disk cache under test, on every driver (auto leaves it off on PoCL).
        setenv("DYNRT_OCL_BINARY_CACHE", "on", 1);
        unsetenv("DYNRT_OCL_DEVICE");
        engine_ = make_engine();   // again, to pick the cache folder up
        dev_ = OclDevice::from(*engine_);
        ASSERT_NE(dev_, nullptr);
        stream_ = engine_->create_stream();
    }
    void TearDown() override {
        stream_.reset();
        engine_.reset();
        unsetenv("DYNRT_OCL_BINARY_CACHE");
        if (!cache_dir_.empty()) fs::remove_all(cache_dir_);
    }

    std::shared_ptr<Buffer> upload(Engine& e, Stream& s, const std::vector<float>& v) {
        auto b = e.allocate(v.size() * sizeof(float));
        b->write(s, v.data(), 0, v.size() * sizeof(float));
        return b;
    }
    std::vector<float> download(Stream& s, Buffer& b, size_t n, size_t offset_bytes = 0) {
        std::vector<float> v(n);
        b.read(s, v.data(), offset_bytes, n * sizeof(float));
        return v;
    }
    // Builds the static vector_add for length n, runs it and checks every element.
    void check_static_vector_add(Engine& e, size_t n) {
        OclDevice* dev = OclDevice::from(e);
        auto stream = e.create_stream();
        JitDefines defs = shape_agnostic_defines(false);
        for (auto& d : tensor_jit_defines("OUTPUT0", Layout(Shape{static_cast<int64_t>(n)}, DataType::f32), -1))
            defs.push_back(d);
        auto kernel = dev->build_kernel(kVectorAdd, "vector_add", defs);
        const auto a = pattern(n, 1), b = pattern(n, 2);
        auto ba = upload(e, *stream, a), bb = upload(e, *stream, b);
        auto bo = e.allocate(n * sizeof(float));
        Memory ma(ba, Layout(Shape{static_cast<int64_t>(n)}, DataType::f32));
        Memory mb(bb, ma.layout()), mo(bo, ma.layout());
        const size_t work[3] = {n, 1, 1};
        dev->launch(*stream, *kernel, {OclArg::mem(ma), OclArg::mem(mb), OclArg::mem(mo), OclArg::f32(0.5f)},
                    dispatch_for(work, 1, dev->limits()));
        stream->finish();
        const auto out = download(*stream, *bo, n);
        for (size_t i = 0; i < n; ++i) ASSERT_NEAR(out[i], a[i] + 0.5f * b[i], 1e-6f) << "n=" << n << " i=" << i;
    }
    std::vector<fs::path> cache_files() const {
        std::vector<fs::path> files;
        for (const auto& f : fs::directory_iterator(dev_->cache_dir()))
            if (f.path().extension() == ".clbin") files.push_back(f.path());
        return files;
    }

    EnginePtr engine_;
    OclDevice* dev_ = nullptr;
    std::shared_ptr<Stream> stream_;
    fs::path cache_dir_;
};

class FakeEngine : public Engine {
public:
    const DeviceInfo& info() const override { return info_; }
    std::shared_ptr<Stream> create_stream() override { return nullptr; }

protected:
    std::shared_ptr<Buffer> do_allocate(size_t) override { return nullptr; }

private:
    DeviceInfo info_;
};

}   // namespace

// ---- host-only helpers ----------------------------------------------------------

TEST(OclApi, OclDeviceFrom_OtherEngineIsNull) {
    FakeEngine e;
    EXPECT_EQ(OclDevice::from(e), nullptr);
}

TEST(OclApi, ShapeInfoPack_RightAlignsDimsAndPaddingsOfDynamicTensorsOnly) {
    const Layout in0(PartialShape{Dimension::dynamic(), 7}, DataType::f32);
    const Layout in1(Shape{3}, DataType::f32);   // static: no slot
    const Layout out0(PartialShape::dynamic_of_rank(3), DataType::f32);
    const ShapeInfoPlan plan = plan_shape_info({in0, in1}, {out0});
    EXPECT_EQ(plan.input_slots, (std::vector<int>{0, -1}));
    EXPECT_EQ(plan.output_slots, (std::vector<int>{1}));
    EXPECT_EQ(plan.ints(), 48u);
    std::vector<int32_t> packed;
    // The output is a view of rows 2..4 of a [2, 8, 4] buffer (padding on dim 1).
    const Layout view(PartialShape{2, 3, 4}, DataType::f32, Format::plain, Padding{{0, 2, 0}, {0, 3, 0}});
    pack_shape_info(plan, {Layout(Shape{5, 7}, DataType::f32), in1}, {view}, packed);
    EXPECT_EQ(packed, (std::vector<int32_t>{1, 1, 1, 1, 1, 1, 5, 7,      // slot 0 dims
                                            0, 0, 0, 0, 0, 0, 0, 0,      // lower
                                            0, 0, 0, 0, 0, 0, 0, 0,      // upper
                                            1, 1, 1, 1, 1, 2, 3, 4,      // slot 1 dims
                                            0, 0, 0, 0, 0, 0, 2, 0,      // lower
                                            0, 0, 0, 0, 0, 0, 3, 0}));   // upper
}

TEST(OclApi, ShapeInfoPack_RejectsRankAboveEightBadPaddingAndHugeDims) {
    const ShapeInfoPlan plan = plan_shape_info({Layout(PartialShape::dynamic_of_rank(9), DataType::f32)}, {});
    std::vector<int32_t> packed;
    EXPECT_TRUE(
        contains(error_of([&] {
                     pack_shape_info(plan, {Layout(Shape{1, 1, 1, 1, 1, 1, 1, 1, 2}, DataType::f32)}, {}, packed);
                 }),
                 "rank 9"));
    const ShapeInfoPlan plan1 = plan_shape_info({Layout(PartialShape{Dimension::dynamic()}, DataType::f32)}, {});
    Padding pad;
    pad.lower = {-1};
    pad.upper = {0};
    EXPECT_TRUE(contains(
        error_of([&] { pack_shape_info(plan1, {Layout(Shape{4}, DataType::f32, Format::plain, pad)}, {}, packed); }),
        "padding of dim 0"));
    EXPECT_TRUE(contains(
        error_of([&] { pack_shape_info(plan1, {Layout(Shape{int64_t{1} << 33}, DataType::f32)}, {}, packed); }),
        "int32"));
}

TEST(OclApi, ShapeAgnosticDefines_DifferForStaticAndDynamicBuilds) {
    auto find = [](const JitDefines& d, const std::string& k) {
        for (const auto& kv : d)
            if (kv.first == k) return kv.second;
        return std::string("<missing>");
    };
    const JitDefines dyn = shape_agnostic_defines(true), stat = shape_agnostic_defines(false);
    EXPECT_EQ(find(dyn, "IS_DYNAMIC"), "1");
    EXPECT_EQ(find(dyn, "OPTIONAL_SHAPE_INFO_ARG"),
              "__global const int* shape_info_base, const int shape_info_offset,");
    EXPECT_EQ(find(dyn, "OPTIONAL_SHAPE_INFO_TENSOR"), "shape_info_base, shape_info_offset,");
    EXPECT_EQ(find(dyn, "shape_info"), "(shape_info_base + shape_info_offset)");
    EXPECT_EQ(find(stat, "IS_DYNAMIC"), "0");
    EXPECT_EQ(find(stat, "OPTIONAL_SHAPE_INFO_ARG"), "");
    EXPECT_EQ(find(stat, "OPTIONAL_SHAPE_INFO_TENSOR"), "");

    // Slot 1, shape [?, 4]: dims 0..5 are leading ones, dim 6 reads
    // shape_info[1 * 24 + 6], dim 7 is the literal 4; the paddings of a
    // dynamic layout come from the slot too (lower at +8, upper at +16).
    const JitDefines t = tensor_jit_defines("IN", Layout(PartialShape{Dimension::dynamic(), 4}, DataType::f16), 1);
    EXPECT_EQ(find(t, "IN_TYPE"), "half");
    EXPECT_EQ(find(t, "IN_RANK"), "2");
    EXPECT_EQ(find(t, "IN_DIM0"), "1");
    EXPECT_EQ(find(t, "IN_DIM6"), "(shape_info[30])");
    EXPECT_EQ(find(t, "IN_DIM7"), "4");
    EXPECT_EQ(find(t, "IN_LENGTH"), "((shape_info[30])*4)");
    EXPECT_EQ(find(t, "IN_PAD_LOWER6"), "(shape_info[38])");
    EXPECT_EQ(find(t, "IN_PAD_UPPER7"), "(shape_info[47])");
    EXPECT_EQ(find(t, "IN_PAD_LOWER0"), "0");
    // A static dense layout: padded paths compile out.
    const JitDefines st = tensor_jit_defines("S", Layout(PartialShape{2, 3}, DataType::f32), -1);
    EXPECT_EQ(find(st, "S_PADDED"), "0");
    EXPECT_EQ(find(st, "S_PHYS(i)"), "((ulong)(i))");
    const JitDefines sp =
        tensor_jit_defines("P", Layout(PartialShape{2, 3}, DataType::f32, Format::plain, Padding{{0, 1}, {0, 2}}), -1);
    EXPECT_EQ(find(sp, "P_PADDED"), "1");
    EXPECT_EQ(find(sp, "P_PAD_LOWER7"), "1");
    EXPECT_TRUE(contains(
        error_of([] { tensor_jit_defines("IN", Layout(PartialShape{Dimension::dynamic()}, DataType::f32), -1); }),
        "no shape_info slot"));
}

TEST(OclApi, PickLocalSize_UsesASmallFixedSetAndCoversTheWork) {
    OclDeviceLimits limits;
    limits.preferred_local_size = 64;
    limits.max_work_group_size = 1024;
    limits.max_work_item_sizes = {1024, 1024, 1024};
    std::set<std::array<size_t, 3>> seen;
    const size_t extents[] = {1, 2, 3, 13, 16, 17, 255, 257, 1000};
    for (size_t dims = 1; dims <= 3; ++dims)
        for (size_t x : extents)
            for (size_t y : extents)
                for (size_t z : extents) {
                    const size_t work[3] = {x, dims > 1 ? y : 1, dims > 2 ? z : 1};
                    const OclDispatch d = dispatch_for(work, dims, limits);
                    seen.insert(d.lws);
                    size_t total = 1;
                    for (size_t i = 0; i < 3; ++i) {
                        ASSERT_GE(d.gws[i], work[i]);
                        ASSERT_EQ(d.gws[i] % d.lws[i], 0u);
                        ASSERT_LT(d.gws[i] - work[i], d.lws[i]);
                        total *= d.lws[i];
                    }
                    ASSERT_LE(total, 64u);
                }
    // One config per subset of dims with extent > 1: 1 + 3 + 3 + 1.
    EXPECT_LE(seen.size(), 8u);
    const size_t one_d[3] = {1000, 1, 1};
    EXPECT_EQ(pick_local_size(one_d, 1, limits), (std::array<size_t, 3>{64, 1, 1}));
    const size_t two_d[3] = {100, 100, 1};
    EXPECT_EQ(pick_local_size(two_d, 2, limits), (std::array<size_t, 3>{8, 8, 1}));
    limits.max_work_group_size = 16;   // a small device caps the set
    EXPECT_EQ(pick_local_size(one_d, 1, limits), (std::array<size_t, 3>{16, 1, 1}));
}

// ---- device ------------------------------------------------------------------------

TEST(OclDeviceChoice, NoPlatform_FactoryThrowsInstallHint) {
    if (!ocl_registry()) GTEST_SKIP() << "the ocl module is not built (no OpenCL SDK)";
    GTEST_FLAG_SET(death_test_style, "threadsafe");
    // The ICD loader reads its vendor list once per process: check in a child
    // that starts with an empty vendor folder.
    const fs::path empty = fs::temp_directory_path() / ("dynrt-ocl-no-icd-" + std::to_string(getpid()));
    fs::create_directories(empty);
    EXPECT_EXIT(
        {
            setenv("OCL_ICD_VENDORS", empty.c_str(), 1);
            Registry reg;
            ModuleLoader::load_file(reg, kModulePath);
            int code = 0;
            try {
                reg.create_engine("ocl", EngineConfig{"ocl", false});
            } catch (const Error& e) {
                std::fprintf(stderr, "%s\n", e.what());
                code = 3;
            }
            // The child (a re-run of this test) made a folder of its own.
            fs::remove_all(empty);
            std::exit(code);
        },
        ::testing::ExitedWithCode(3), "no OpenCL platform found \\(install an ICD such as pocl-opencl-icd\\)");
    fs::remove_all(empty);
}

TEST_F(OclEngineTest, DefaultDevice_ReportsNameAndLimits) {
    const DeviceInfo& info = engine_->info();
    const OclDeviceLimits& l = dev_->limits();
    EXPECT_EQ(info.type, "ocl");
    EXPECT_EQ(info.name, l.platform_name + ": " + l.device_name);
    EXPECT_GT(info.max_alloc_bytes, 0u);
    EXPECT_EQ(info.max_alloc_bytes, l.max_alloc_bytes);
    EXPECT_GE(info.global_mem_bytes, info.max_alloc_bytes);
    EXPECT_GT(l.max_work_group_size, 0u);
    EXPECT_GT(l.local_mem_bytes, 0u);
    EXPECT_GT(l.compute_units, 0u);
    EXPECT_GT(l.base_addr_align_bytes, 0u);
}

TEST_F(OclEngineTest, DeviceIndexZero_IsTheFirstDevice) {
    auto e0 = make_engine("ocl:0");
    EXPECT_EQ(e0->info().type, "ocl");
    EXPECT_FALSE(e0->info().name.empty());
    // Without a GPU, "ocl" falls back to the first device.
    if (!dev_->limits().is_gpu) {
        EXPECT_EQ(e0->info().name, engine_->info().name);
    }
}

TEST_F(OclEngineTest, DeviceIndexOutOfRange_ThrowsListingTheDevices) {
    const std::string msg = error_of([] { make_engine("ocl:99"); });
    EXPECT_TRUE(contains(msg, "OpenCL device 99")) << msg;
    EXPECT_TRUE(contains(msg, "ocl:0  " + engine_->info().name)) << msg;
    const std::string bad = error_of([] { make_engine("ocl:first"); });
    EXPECT_TRUE(contains(bad, "bad OpenCL device index 'first'")) << bad;
}

TEST_F(OclEngineTest, DeviceEnvIndex_AppliesWithoutIndexAndConfigWins) {
    EnvGuard guard("DYNRT_OCL_DEVICE");
    setenv("DYNRT_OCL_DEVICE", "42", 1);
    const std::string msg = error_of([] { make_engine("ocl"); });
    EXPECT_TRUE(contains(msg, "DYNRT_OCL_DEVICE=42")) << msg;
    EXPECT_NO_THROW(make_engine("ocl:0"));
    setenv("DYNRT_OCL_DEVICE", "0", 1);
    EXPECT_NO_THROW(make_engine("ocl"));
}

TEST_F(OclEngineTest, BufferWriteReadMap_RoundTrips) {
    const size_t n = 1000;
    const auto v = pattern(n, 7);
    const size_t before = engine_->used_bytes();
    auto b = upload(*engine_, *stream_, v);
    EXPECT_EQ(engine_->used_bytes(), before + n * sizeof(float));
    EXPECT_EQ(download(*stream_, *b, n), v);
    // Partial read at an offset.
    EXPECT_EQ(download(*stream_, *b, 10, 100 * sizeof(float)), std::vector<float>(v.begin() + 100, v.begin() + 110));
    {
        Memory whole(b, Layout(Shape{static_cast<int64_t>(n)}, DataType::f32));
        Memory tail(b, Layout(Shape{10}, DataType::f32), 990 * sizeof(float));
        MappedMemory m(whole, *stream_);
        MappedMemory t(tail, *stream_);   // a second, nested mapping of the same buffer
        for (size_t i = 0; i < n; ++i) ASSERT_EQ(m.as<float>()[i], v[i]);
        EXPECT_EQ(t.as<float>()[0], v[990]);
        for (size_t i = 0; i < n; ++i) m.as<float>()[i] = static_cast<float>(i);
    }
    const auto back = download(*stream_, *b, n);
    for (size_t i = 0; i < n; ++i) ASSERT_EQ(back[i], static_cast<float>(i));
    EXPECT_TRUE(contains(error_of([&] { b->write(*stream_, v.data(), 4, n * sizeof(float)); }), "outside"));

    auto hv = dev_->allocate_host_visible(64);
    const std::vector<float> small = pattern(16, 9);
    hv->write(*stream_, small.data(), 0, 64);
    EXPECT_EQ(download(*stream_, *hv, 16), small);
}

TEST_F(OclEngineTest, AllocationAboveDeviceLimit_ThrowsNamingBothSizes) {
    const size_t limit = engine_->info().max_alloc_bytes;
    const std::string msg = error_of([&] { engine_->allocate(limit + 1); });
    EXPECT_TRUE(contains(msg, std::to_string(limit + 1))) << msg;
    EXPECT_TRUE(contains(msg, std::to_string(limit))) << msg;
    EXPECT_TRUE(contains(msg, engine_->info().name)) << msg;
    EXPECT_EQ(engine_->used_bytes(), 0u);
}

TEST_F(OclEngineTest, KernelThatFailsToCompile_ThrowsWithBuildLogAndKernelName) {
    const std::string src = "__kernel void broken_kernel(__global float* x) { x[0] = undefined_symbol_42; }\n";
    const std::string msg = error_of([&] { dev_->build_kernel(src, "broken_kernel", {}); });
    EXPECT_TRUE(contains(msg, "broken_kernel")) << msg;
    EXPECT_TRUE(contains(msg, "CL_BUILD_PROGRAM_FAILURE")) << msg;
    EXPECT_TRUE(contains(msg, "undefined_symbol_42")) << msg;   // from the compiler's log
    // `#line` makes log positions the source's where the compiler honours it
    // (PoCL does; NVIDIA's reports its own "<kernel>:line:col").
    if (contains(dev_->limits().platform_name, "Portable Computing Language")) {
        EXPECT_TRUE(contains(msg, "broken_kernel.cl:1:")) << msg;
    }
    EXPECT_EQ(dev_->build_stats().source_builds, 0u);

    JitDefines defs = shape_agnostic_defines(false);
    defs.emplace_back("OUTPUT0_LENGTH", "4");
    const std::string missing = error_of([&] { dev_->build_kernel(kVectorAdd, "no_such_kernel", defs); });
    EXPECT_TRUE(contains(missing, "'no_such_kernel'")) << missing;
    EXPECT_TRUE(contains(missing, "CL_INVALID_KERNEL_NAME")) << missing;
}

// A build's warnings (here a #warning) reach stderr only from a verbose
// engine, as its build log; otherwise nothing is printed, not even a
// driver's own "N warnings generated." line.
TEST_F(OclEngineTest, BuildWarnings_ShowOnlyWhenVerbose) {
    // The process id keeps a driver's own program cache from answering.
    const std::string src =
        "#warning dynrt_test_warning_77\n__kernel void warned(__global float* x) { x[0] = 1.0f; }\n"
        "// " +
        std::to_string(getpid()) + "\n";
    ::testing::internal::CaptureStderr();
    dev_->build_kernel(src, "warned", {});
    const std::string quiet = ::testing::internal::GetCapturedStderr();
    EXPECT_FALSE(contains(quiet, "warning")) << quiet;

    EngineConfig cfg;
    cfg.device = "ocl";
    cfg.verbose = true;
    const EnginePtr loud_engine = ocl_registry()->create_engine("ocl", cfg);
    OclDevice* loud = OclDevice::from(*loud_engine);
    ASSERT_NE(loud, nullptr);
    ::testing::internal::CaptureStderr();
    loud->build_kernel(src + "// another program\n", "warned", {});
    const std::string shown = ::testing::internal::GetCapturedStderr();
    EXPECT_TRUE(contains(shown, "build log of kernel 'warned'")) << shown;
    EXPECT_TRUE(contains(shown, "dynrt_test_warning_77")) << shown;
}

TEST_F(OclEngineTest, VectorAddStatic_MatchesHostOverTailSizes) {
    for (size_t n : kTailSizes) check_static_vector_add(*engine_, n);
    EXPECT_EQ(dev_->build_stats().source_builds, kTailSizes.size());
}

TEST_F(OclEngineTest, VectorAddShapeAgnostic_ReadsEachRunsShapeInfo) {
    // One build serves every length. All runs are enqueued back to back, with
    // one shape_info buffer rewritten before each: each run must see its own
    // length (elements past it keep their sentinel), which fails if a write
    // overtook the kernel of the run before.
    const Layout dyn(PartialShape{Dimension::dynamic()}, DataType::f32);
    const ShapeInfoPlan plan = plan_shape_info({dyn, dyn}, {dyn});
    ASSERT_EQ(plan.ints(), 3 * kShapeInfoSlotInts);
    JitDefines defs = shape_agnostic_defines(true);
    for (auto& d : tensor_jit_defines("OUTPUT0", dyn, plan.output_slots[0])) defs.push_back(d);
    auto kernel = dev_->build_kernel(kVectorAdd, "vector_add", defs);

    const size_t cap = 257;
    const auto a = pattern(cap, 11), b = pattern(cap, 12);
    auto ba = upload(*engine_, *stream_, a), bb = upload(*engine_, *stream_, b);
    // shape_info sits 128 bytes into its buffer (as in a stream's arena): the
    // kernel gets the buffer and the offset in ints.
    const size_t at = 128;
    auto shape_info = engine_->allocate(at + plan.bytes());
    const std::vector<size_t> order = {257, 1, 16, 3, 255, 13, 17};
    const float sentinel = -1000.0f;
    std::vector<std::shared_ptr<Buffer>> outs;
    std::vector<int32_t> packed;
    for (size_t n : order) {
        const Layout rt(Shape{static_cast<int64_t>(n)}, DataType::f32);
        outs.push_back(upload(*engine_, *stream_, std::vector<float>(cap, sentinel)));
        Memory ma(ba, rt), mb(bb, rt), mo(outs.back(), rt);
        pack_shape_info(plan, {rt, rt}, {rt}, packed);
        dev_->write_async(*stream_, *shape_info, at, packed.data(), plan.bytes());
        std::fill(packed.begin(), packed.end(), -1);   // the source is free at once
        const size_t work[3] = {n, 1, 1};
        dev_->launch(*stream_, *kernel,
                     {OclArg::buf(*shape_info), OclArg::i32(int32_t(at / 4)), OclArg::mem(ma), OclArg::mem(mb),
                      OclArg::mem(mo), OclArg::f32(2.0f)},
                     dispatch_for(work, 1, dev_->limits()));
    }
    stream_->finish();
    for (size_t k = 0; k < order.size(); ++k) {
        const auto out = download(*stream_, *outs[k], cap);
        for (size_t i = 0; i < cap; ++i) {
            const float want = i < order[k] ? a[i] + 2.0f * b[i] : sentinel;
            ASSERT_NEAR(out[i], want, 1e-6f) << "n=" << order[k] << " i=" << i;
        }
    }
    EXPECT_EQ(dev_->build_stats().source_builds, 1u);
    std::vector<int32_t> device_info(plan.ints());
    shape_info->read(*stream_, device_info.data(), at, plan.bytes());
    EXPECT_EQ(device_info[7], 17);   // the last run's length
}

TEST_F(OclEngineTest, ShapeInfoRegions_ShareAFewBuffersPerStreamAndAreReused) {
    const size_t allocs0 = engine_->allocation_count();
    std::vector<std::shared_ptr<ShapeInfoRegion>> regions;
    std::set<std::pair<const Buffer*, size_t>> seen;
    for (int i = 0; i < 64; ++i) {
        regions.push_back(dev_->shape_info_region(*stream_, 96));
        const ShapeInfoRegion& r = *regions.back();
        EXPECT_EQ(r.stream(), stream_.get());
        EXPECT_EQ(r.offset() % 128, 0u);
        EXPECT_LE(r.offset() + 96, r.buffer().size());
        EXPECT_TRUE(seen.insert({&r.buffer(), r.offset()}).second) << "region " << i << " handed out twice";
    }
    std::set<const Buffer*> buffers;
    for (const auto& r : regions) buffers.insert(&r->buffer());
    // 64 regions of 128 bytes: 4 KiB, then 8 KiB (32 + 64 regions)
    EXPECT_EQ(buffers.size(), 2u);
    EXPECT_EQ(engine_->allocation_count() - allocs0, 2u);

    // Released regions are handed out again before anything is allocated.
    const auto [buf, off] = std::make_pair(&regions[5]->buffer(), regions[5]->offset());
    regions[5].reset();
    auto again = dev_->shape_info_region(*stream_, 100);
    EXPECT_EQ(&again->buffer(), buf);
    EXPECT_EQ(again->offset(), off);
    EXPECT_EQ(engine_->allocation_count() - allocs0, 2u);

    // Another stream has arenas of its own; a request above 1 MiB a buffer of its own.
    auto other_stream = engine_->create_stream();
    auto other = dev_->shape_info_region(*other_stream, 96);
    EXPECT_EQ(buffers.count(&other->buffer()), 0u);
    auto big = dev_->shape_info_region(*stream_, (size_t(1) << 20) + 4);
    EXPECT_EQ(big->offset(), 0u);
    EXPECT_GE(big->buffer().size(), (size_t(1) << 20) + 4);
    EXPECT_EQ(buffers.count(&big->buffer()), 0u);

    // A region written through OclShapeInfo holds the packed ints at its offset.
    OclShapeInfo si(2 * sizeof(int32_t));
    EXPECT_TRUE(si.needs_region(*stream_));
    si.update(*dev_, *stream_, {7, 9});
    EXPECT_FALSE(si.needs_region(*stream_));
    EXPECT_TRUE(si.needs_region(*other_stream));
    std::vector<OclArg> args;
    si.push_args(args);
    ASSERT_EQ(args.size(), 2u);
    ASSERT_EQ(args[0].kind, OclArg::Kind::buffer);
    std::vector<int32_t> back(2);
    const_cast<Buffer*>(args[0].buffer)->read(*stream_, back.data(), size_t(args[1].int_value) * 4, 8);
    EXPECT_EQ(back, (std::vector<int32_t>{7, 9}));
    EXPECT_NE(error_of([&] { si.update(*dev_, *stream_, {1, 2, 3}); }).find("shape_info"), std::string::npos);
}

TEST_F(OclEngineTest, MemoryOffset_IsPassedAsSubBufferOrRefused) {
    JitDefines defs = shape_agnostic_defines(false);
    for (auto& d : tensor_jit_defines("OUTPUT0", Layout(Shape{8}, DataType::f32), -1)) defs.push_back(d);
    auto kernel = dev_->build_kernel(kVectorAdd, "vector_add", defs);
    const size_t align = dev_->limits().base_addr_align_bytes;
    const size_t total = align / sizeof(float) + 8;
    const auto a = pattern(total, 21), b = pattern(total, 22);
    auto ba = upload(*engine_, *stream_, a), bb = upload(*engine_, *stream_, b);
    auto bo = upload(*engine_, *stream_, std::vector<float>(total, 0.0f));
    const Layout l(Shape{8}, DataType::f32);
    Memory ma(ba, l, align), mb(bb, l, align), mo(bo, l, align);
    const size_t work[3] = {8, 1, 1};
    dev_->launch(*stream_, *kernel, {OclArg::mem(ma), OclArg::mem(mb), OclArg::mem(mo), OclArg::f32(1.0f)},
                 dispatch_for(work, 1, dev_->limits()));
    stream_->finish();
    const auto out = download(*stream_, *bo, total);
    const size_t first = align / sizeof(float);
    for (size_t i = 0; i < first; ++i) ASSERT_EQ(out[i], 0.0f) << i;
    for (size_t i = 0; i < 8; ++i) ASSERT_NEAR(out[first + i], a[first + i] + b[first + i], 1e-6f) << i;

    if (align > sizeof(float)) {
        Memory odd(bo, l, sizeof(float));
        const std::string msg = error_of([&] {
            dev_->launch(*stream_, *kernel, {OclArg::mem(odd), OclArg::mem(odd), OclArg::mem(odd), OclArg::f32(1.0f)},
                         dispatch_for(work, 1, dev_->limits()));
        });
        EXPECT_TRUE(contains(msg, "multiples of " + std::to_string(align))) << msg;
    }
    const size_t bad_gws[3] = {10, 1, 1}, bad_lws[3] = {4, 1, 1};
    const std::string msg = error_of([&] {
        dev_->launch(*stream_, *kernel, {OclArg::mem(ma), OclArg::mem(mb), OclArg::mem(mo), OclArg::f32(1.0f)}, bad_gws,
                     bad_lws, 1);
    });
    EXPECT_TRUE(contains(msg, "not a multiple of local size 4")) << msg;
}

TEST_F(OclEngineTest, ProfilingStream_CountsLaunches) {
    auto kernel = dev_->build_kernel(kVectorAdd, "vector_add", [] {
        JitDefines d = shape_agnostic_defines(false);
        d.emplace_back("OUTPUT0_LENGTH", "4");
        return d;
    }());
    auto s = dev_->create_stream(true);
    auto buf = upload(*engine_, *s, std::vector<float>(4, 1.0f));
    Memory m(buf, Layout(Shape{4}, DataType::f32));
    const size_t work[3] = {4, 1, 1};
    for (int i = 0; i < 2; ++i)
        dev_->launch(*s, *kernel, {OclArg::mem(m), OclArg::mem(m), OclArg::mem(m), OclArg::f32(1.0f)},
                     dispatch_for(work, 1, dev_->limits()));
    s->finish();
    EXPECT_EQ(dev_->stream_profile(*s).kernels, 2u);
    // y = y + y twice: 1 -> 2 -> 4.
    EXPECT_EQ(download(*s, *buf, 4), std::vector<float>(4, 4.0f));
}

TEST_F(OclEngineTest, BinaryCache_SecondEngineLoadsFromDiskWithoutSourceBuild) {
    check_static_vector_add(*engine_, 17);
    OclBuildStats s1 = dev_->build_stats();
    EXPECT_EQ(s1.source_builds, 1u);
    EXPECT_EQ(s1.disk_cache_hits, 0u);
    EXPECT_EQ(s1.disk_cache_writes, 1u);
    EXPECT_EQ(cache_files().size(), 1u);
    check_static_vector_add(*engine_, 17);   // same engine: memory cache
    EXPECT_EQ(dev_->build_stats().memory_cache_hits, 1u);
    EXPECT_EQ(dev_->build_stats().source_builds, 1u);

    // A new process, simulated: a new engine, and this one's memory cache cleared.
    dev_->clear_program_cache();
    auto e2 = make_engine();
    check_static_vector_add(*e2, 17);
    const OclBuildStats s2 = OclDevice::from(*e2)->build_stats();
    EXPECT_EQ(s2.source_builds, 0u);
    EXPECT_EQ(s2.disk_cache_hits, 1u);
    EXPECT_EQ(s2.disk_cache_rejects, 0u);
}

TEST_F(OclEngineTest, BinaryCache_AutoLeavesPoclToItsOwnKernelCacheAndOffTurnsItOff) {
    const bool pocl = contains(dev_->limits().platform_name, "Portable Computing Language");
    const EnvGuard kernel_cache("POCL_KERNEL_CACHE");
    unsetenv("POCL_KERNEL_CACHE");
    unsetenv("DYNRT_OCL_BINARY_CACHE");   // auto
    {
        EngineConfig verbose;
        verbose.device = "ocl";
        verbose.verbose = true;
        ::testing::internal::CaptureStderr();
        auto e = ocl_registry()->create_engine("ocl", verbose);
        const std::string log = ::testing::internal::GetCapturedStderr();
        check_static_vector_add(*e, 19);
        const OclBuildStats s = OclDevice::from(*e)->build_stats();
        EXPECT_EQ(s.source_builds, 1u);
        if (pocl) {
            EXPECT_TRUE(OclDevice::from(*e)->cache_dir().empty());
            EXPECT_EQ(s.disk_cache_writes, 0u);
            EXPECT_TRUE(contains(log, "binary cache off: PoCL keeps compiled kernels in its own cache")) << log;
        } else {
            EXPECT_FALSE(OclDevice::from(*e)->cache_dir().empty());
            EXPECT_EQ(s.disk_cache_writes, 1u);
        }
    }
    setenv("POCL_KERNEL_CACHE", "0", 1);   // PoCL caching nothing: dynrt's cache is used
    {
        auto e = make_engine();
        check_static_vector_add(*e, 23);
        EXPECT_EQ(OclDevice::from(*e)->build_stats().disk_cache_writes, 1u);
    }
    setenv("DYNRT_OCL_BINARY_CACHE", "off", 1);
    {
        auto e = make_engine();
        EXPECT_TRUE(OclDevice::from(*e)->cache_dir().empty());
        check_static_vector_add(*e, 29);
        EXPECT_EQ(OclDevice::from(*e)->build_stats().disk_cache_writes, 0u);
    }
    setenv("DYNRT_OCL_BINARY_CACHE", "sometimes", 1);
    const std::string err = error_of([] { make_engine(); });
    EXPECT_TRUE(contains(err, "DYNRT_OCL_BINARY_CACHE='sometimes'")) << err;
    EXPECT_TRUE(contains(err, "auto, on or off")) << err;
}

TEST_F(OclEngineTest, BuildOptionsFromTheEnvironmentReachEveryBuildAndItsCacheKey) {
    static const char* const kNeedsMacro = R"CL(
#ifndef DYNRT_EXTRA_OPTION_SEEN
#error the extra build option did not arrive
#endif
__kernel void seen(__global float* out) {
    if (get_global_id(0) < 4) out[get_global_id(0)] = DYNRT_EXTRA_OPTION_SEEN;
}
)CL";
    const EnvGuard guard("DYNRT_OCL_BUILD_OPTIONS");
    unsetenv("DYNRT_OCL_BUILD_OPTIONS");
    const std::string err = error_of([] { OclDevice::from(*make_engine())->build_kernel(kNeedsMacro, "seen", {}); });
    EXPECT_TRUE(contains(err, "the extra build option did not arrive")) << err;

    // A fresh engine on the fixture's disk cache builds the kernel with
    // `options` and returns what it wrote, and its build stats.
    const auto run_with = [&](const char* options, OclBuildStats& stats) {
        setenv("DYNRT_OCL_BUILD_OPTIONS", options, 1);
        auto e = make_engine();
        OclDevice* dev = OclDevice::from(*e);
        auto kernel = dev->build_kernel(kNeedsMacro, "seen", {});
        auto stream = e->create_stream();
        auto out = e->allocate(4 * sizeof(float));
        Memory m(out, Layout(Shape{4}, DataType::f32));
        const size_t work[3] = {4, 1, 1};
        dev->launch(*stream, *kernel, {OclArg::mem(m)}, dispatch_for(work, 1, dev->limits()));
        stream->finish();
        stats = dev->build_stats();
        return download(*stream, *out, 4);
    };
    OclBuildStats s;
    EXPECT_EQ(run_with("-DDYNRT_EXTRA_OPTION_SEEN=7", s), std::vector<float>(4, 7.0f));
    EXPECT_EQ(s.source_builds, 1u);
    EXPECT_EQ(s.disk_cache_writes, 1u);
    // Other options, another cache entry: built from source, not the 7 on disk.
    EXPECT_EQ(run_with("-DDYNRT_EXTRA_OPTION_SEEN=9", s), std::vector<float>(4, 9.0f));
    EXPECT_EQ(s.source_builds, 1u);
    EXPECT_EQ(s.disk_cache_hits, 0u);
    // The first options again: their entry is on disk.
    EXPECT_EQ(run_with("-DDYNRT_EXTRA_OPTION_SEEN=7", s), std::vector<float>(4, 7.0f));
    EXPECT_EQ(s.source_builds, 0u);
    EXPECT_EQ(s.disk_cache_hits, 1u);
}

TEST_F(OclEngineTest, BinaryCache_CorruptOrTruncatedEntryIsRebuilt) {
    check_static_vector_add(*engine_, 13);
    ASSERT_EQ(cache_files().size(), 1u);
    const fs::path file = cache_files()[0];
    const auto original_size = fs::file_size(file);

    // Flip bytes in the binary part (the end of the file).
    {
        std::fstream f(file, std::ios::in | std::ios::out | std::ios::binary);
        f.seekp(static_cast<std::streamoff>(original_size) - 16);
        const char junk[8] = {'\x55', '\x13', '\x7f', '\x00', '\xff', '\x42', '\x24', '\x99'};
        f.write(junk, sizeof junk);
    }
    auto e2 = make_engine();
    check_static_vector_add(*e2, 13);
    OclBuildStats s2 = OclDevice::from(*e2)->build_stats();
    EXPECT_EQ(s2.disk_cache_rejects, 1u);
    EXPECT_EQ(s2.disk_cache_hits, 0u);
    EXPECT_EQ(s2.source_builds, 1u);
    EXPECT_EQ(s2.disk_cache_writes, 1u);   // the entry was replaced

    // Truncated, then garbage.
    fs::resize_file(file, original_size / 2);
    auto e3 = make_engine();
    check_static_vector_add(*e3, 13);
    EXPECT_EQ(OclDevice::from(*e3)->build_stats().disk_cache_rejects, 1u);
    EXPECT_EQ(OclDevice::from(*e3)->build_stats().source_builds, 1u);
    { std::ofstream(file, std::ios::binary | std::ios::trunc) << "not a cache entry"; }
    auto e4 = make_engine();
    check_static_vector_add(*e4, 13);
    EXPECT_EQ(OclDevice::from(*e4)->build_stats().disk_cache_rejects, 1u);

    // After the rebuilds the entry is good again.
    auto e5 = make_engine();
    check_static_vector_add(*e5, 13);
    EXPECT_EQ(OclDevice::from(*e5)->build_stats().disk_cache_hits, 1u);
    EXPECT_EQ(OclDevice::from(*e5)->build_stats().source_builds, 0u);
}
