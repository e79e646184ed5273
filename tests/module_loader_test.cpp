// Module loader and registry: every way a module can be refused (each message
// names the file and says what to do), the registry staying usable afterwards,
// search-path rules and the lifetime of libraries behind impls.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <string>

#include "cli_support.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_abi.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/op_sdk.hpp"
#include "dynrt/primitive_inst.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace dynrt;

namespace {

std::string case_dir(const std::string& c) { return std::string(DYNRT_TEST_MODULES_DIR) + "/" + c; }
std::string case_file(const std::string& c, const std::string& target) { return case_dir(c) + "/lib" + target + ".so"; }

// Loads `path` expecting failure; returns the error text (what()).
std::string load_error(Registry& reg, const std::string& path) {
    try {
        ModuleLoader::load_file(reg, path);
    } catch (const Error& e) {
        EXPECT_EQ(e.context().file, fs::path(path).lexically_normal().string());
        return e.what();
    }
    ADD_FAILURE() << path << " loaded although it should have been refused";
    return {};
}

// After a refusal the registry still takes a good module.
void expect_usable(Registry& reg) {
    ASSERT_NO_THROW(ModuleLoader::load_file(reg, case_file("good", "tm_good")));
    EXPECT_NE(reg.find_op("tm_good_op"), nullptr);
    EXPECT_EQ(reg.impls("tm_good_op", "cpu").size(), 1u);
}

bool is_mapped(const std::string& path) {
    // RTLD_NOLOAD only finds a library that is already mapped; it takes a
    // reference, so give it back at once.
    void* h = dlopen(path.c_str(), RTLD_NOW | RTLD_NOLOAD);
    if (!h) return false;
    dlclose(h);
    return true;
}

using test::EnvGuard;

}   // namespace

TEST(ModuleLoader, TextFileNamedSo_IsRefusedAsNotASharedObject) {
    Registry reg;
    const std::string path = case_dir("not_so") + "/libtm_text.so";
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a shared object"), std::string::npos) << msg;
    // Boost 1.74 appends an unrelated errc text; it must not reach the user.
    EXPECT_EQ(msg.find("Bad file descriptor"), std::string::npos) << msg;
    EXPECT_TRUE(reg.modules().empty());
    expect_usable(reg);
}

TEST(ModuleLoader, SharedObjectWithoutEntryPoint_IsRefusedAsNotADynrtModule) {
    Registry reg;
    const std::string path = case_file("no_entry", "tm_no_entry");
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("lacks the entry point dynrt_module_info_v1"), std::string::npos) << msg;
    EXPECT_NE(msg.find("not a dynrt module"), std::string::npos) << msg;
    expect_usable(reg);
}

TEST(ModuleLoader, OtherAbiVersion_IsRefusedBeforeRegistering) {
    // The module's register entry point aborts: reaching it would kill the test.
    Registry reg;
    const std::string path = case_file("bad_abi", "tm_bad_abi");
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("built for ABI 2"), std::string::npos) << msg;
    EXPECT_NE(msg.find("this dynrt is ABI " + std::to_string(DYNRT_MODULE_ABI_VERSION)), std::string::npos) << msg;
    EXPECT_NE(msg.find("rebuild the module against this dynrt SDK"), std::string::npos) << msg;
    expect_usable(reg);
}

TEST(ModuleLoader, OtherFingerprint_IsRefusedNamingBothFingerprints) {
    Registry reg;
    const std::string path = case_file("bad_fingerprint", "tm_bad_fingerprint");
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("fingerprint other-build"), std::string::npos) << msg;
    EXPECT_NE(msg.find(std::string("fingerprint ") + DYNRT_BUILD_FINGERPRINT), std::string::npos) << msg;
    EXPECT_NE(msg.find("rebuild the module against this dynrt SDK"), std::string::npos) << msg;
    expect_usable(reg);
}

TEST(ModuleLoader, RegisterThatThrows_LeavesNothingRegistered) {
    Registry reg;
    const std::string path = case_file("throws", "tm_throws");
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("threw while registering"), std::string::npos) << msg;
    EXPECT_NE(msg.find("deliberate failure after staging op tm_throw_op"), std::string::npos) << msg;
    EXPECT_EQ(reg.find_op("tm_throw_op"), nullptr);
    EXPECT_TRUE(reg.all_impls("tm_throw_op").empty());
    EXPECT_TRUE(reg.modules().empty());
    expect_usable(reg);
}

TEST(ModuleLoader, DuplicateOp_IsRefusedNamingBothModules) {
    Registry reg;
    const std::string a = case_file("duplicate", "tm_dup_a");
    const std::string b = case_file("duplicate", "tm_dup_b");
    ModuleLoader::load_file(reg, a);
    const std::string msg = load_error(reg, b);
    EXPECT_NE(msg.find("op 'tm_dup_op' is registered by both " + a + " and " + b), std::string::npos) << msg;
    // The first registration stays, with its one impl; the second module is not recorded.
    ASSERT_NE(reg.find_op("tm_dup_op"), nullptr);
    EXPECT_EQ(reg.find_op("tm_dup_op")->module->path, a);
    EXPECT_EQ(reg.all_impls("tm_dup_op").size(), 1u);
    ASSERT_EQ(reg.modules().size(), 1u);
    expect_usable(reg);
}

TEST(ModuleLoader, UnresolvedSymbol_FailsAtLoadNotAtFirstCall) {
    Registry reg;
    const std::string path = case_file("unresolved", "tm_unresolved");
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("undefined symbol"), std::string::npos) << msg;
    EXPECT_NE(msg.find("tm_symbol_defined_nowhere"), std::string::npos) << msg;
    EXPECT_NE(msg.find("rebuild"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("Bad file descriptor"), std::string::npos) << msg;
    expect_usable(reg);
}

// A module whose library is not found (an install without RUNPATHs, a
// library removed) is told apart from a bad module: the message names the
// library and what to do, not "rebuild the module".
TEST(ModuleLoader, MissingLibrary_NamesItAndTheSearchPath) {
    const std::string gemm = std::string(DYNRT_TEST_MODULE_DIR) + "/libdynrt_op_gemm.so";
    std::ifstream in(gemm, std::ios::binary);
    ASSERT_TRUE(in) << gemm;
    std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // The same length, so the ELF stays well-formed: the module now needs a
    // library that exists nowhere.
    const std::string needed = "libdynrt_cpu_sdk.so.0", gone = "libdynrt_no_such.so.0";
    const size_t at = bytes.find(needed);
    ASSERT_NE(at, std::string::npos) << "the gemm module no longer links the cpu SDK: pick another module";
    for (size_t k = at; k != std::string::npos; k = bytes.find(needed, k)) bytes.replace(k, needed.size(), gone);
    test::ScratchDir dir("dynrt_missing_lib");
    const std::string path = dir / "libdynrt_op_gemm.so";
    std::ofstream(path, std::ios::binary) << bytes;
    Registry reg;
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find(path), std::string::npos) << msg;
    EXPECT_NE(msg.find("it needs " + gone), std::string::npos) << msg;
    EXPECT_NE(msg.find("LD_LIBRARY_PATH"), std::string::npos) << msg;
    EXPECT_EQ(msg.find("rebuild"), std::string::npos) << msg;
    expect_usable(reg);
}

TEST(ModuleLoader, MissingFile_IsRefused) {
    Registry reg;
    const std::string path = case_dir("good") + "/libdoes_not_exist.so";
    const std::string msg = load_error(reg, path);
    EXPECT_NE(msg.find("no such module file"), std::string::npos) << msg;
}

TEST(ModuleLoader, GoodModule_RegistersOpImplAndRecord) {
    Registry reg;
    const std::string path = case_file("good", "tm_good");
    ModuleLoader::load_file(reg, path);
    const RegisteredOp& op = reg.op("tm_good_op");
    EXPECT_EQ(op.def.name, "tm_good_op");
    ASSERT_TRUE(op.module);
    EXPECT_EQ(op.module->path, path);
    EXPECT_EQ(op.module->fingerprint, DYNRT_BUILD_FINGERPRINT);
    EXPECT_EQ(op.module->name, "tm_tm_good_op");
    ASSERT_EQ(op.module->ops.size(), 1u);
    EXPECT_EQ(op.module->ops[0], "tm_good_op");
    ASSERT_EQ(op.module->impls.size(), 1u);
    EXPECT_EQ(op.module->impls[0].second, "two_x_plus_one");
    EXPECT_TRUE(op.library);
    const auto impls = reg.impls("tm_good_op", "cpu");
    ASSERT_EQ(impls.size(), 1u);
    EXPECT_EQ(impls[0]->entry.name, "two_x_plus_one");
    EXPECT_TRUE(reg.impls("tm_good_op", "ocl").empty());
    ASSERT_EQ(reg.modules().size(), 1u);
    EXPECT_EQ(reg.modules()[0]->path, path);
}

TEST(ModuleLoader, RelativePath_IsMadeAbsolute) {
    Registry reg;
    const fs::path abs = case_file("good", "tm_good");
    const fs::path rel = fs::relative(abs, fs::current_path());
    ModuleLoader::load_file(reg, rel.string());
    ASSERT_EQ(reg.modules().size(), 1u);
    EXPECT_TRUE(fs::path(reg.modules()[0]->path).is_absolute());
    EXPECT_EQ(reg.modules()[0]->path, abs.string());
}

TEST(ModuleLoader, LoadDirsWithMix_LoadsGoodOnesAndReportsBadOnes) {
    Registry reg;
    const LoadReport report = ModuleLoader::load_dirs(reg, {case_dir("mix")});
    ASSERT_EQ(report.loaded.size(), 2u);
    // Sorted by name: a before d.
    EXPECT_EQ(report.loaded[0], case_file("mix", "tm_mix_a_good"));
    EXPECT_EQ(report.loaded[1], case_file("mix", "tm_mix_d_good"));
    ASSERT_EQ(report.failed.size(), 2u);
    EXPECT_EQ(report.failed[0].path, case_dir("mix") + "/libtm_mix_b_text.so");
    EXPECT_NE(report.failed[0].message.find("not a shared object"), std::string::npos);
    EXPECT_NE(report.failed[0].message.find(report.failed[0].path), std::string::npos);
    EXPECT_EQ(report.failed[1].path, case_file("mix", "tm_mix_c_no_entry"));
    EXPECT_NE(report.failed[1].message.find("lacks the entry point"), std::string::npos);
    EXPECT_NE(reg.find_op("tm_mix_op_a"), nullptr);
    EXPECT_NE(reg.find_op("tm_mix_op_d"), nullptr);
    EXPECT_EQ(reg.op_names().size(), 2u);
}

TEST(ModuleLoader, LoadDirsMissingFolder_IsReportedAndOthersStillLoad) {
    Registry reg;
    const std::string missing = case_dir("no_such_folder");
    const LoadReport report = ModuleLoader::load_dirs(reg, {missing, case_dir("good")});
    ASSERT_EQ(report.failed.size(), 1u);
    EXPECT_EQ(report.failed[0].path, missing);
    EXPECT_NE(report.failed[0].message.find("does not exist"), std::string::npos);
    ASSERT_EQ(report.loaded.size(), 1u);
    EXPECT_NE(reg.find_op("tm_good_op"), nullptr);
}

TEST(ModuleLoader, SearchPath_ExplicitThenEnvironmentThenDefault) {
    EnvGuard guard("DYNRT_MODULE_PATH");
    setenv("DYNRT_MODULE_PATH", "/a:/b::/c:", 1);
    EXPECT_EQ(ModuleLoader::search_path({}), (std::vector<std::string>{"/a", "/b", "/c"}));
    EXPECT_EQ(ModuleLoader::search_path({"/x"}), (std::vector<std::string>{"/x"}));
    unsetenv("DYNRT_MODULE_PATH");
    const auto dflt = ModuleLoader::search_path({});
    ASSERT_EQ(dflt.size(), 1u);
    EXPECT_EQ(dflt[0], ModuleLoader::default_module_dir());
    // <exe dir>/../lib/dynrt, computed independently from this process's executable.
    const fs::path exe = fs::read_symlink("/proc/self/exe");
    EXPECT_EQ(fs::path(dflt[0]), (exe.parent_path().parent_path() / "lib" / "dynrt").lexically_normal());
}

TEST(ModuleLoader, ImplOutlivesRegistry_KeepsItsLibraryMapped) {
    const std::string path = case_file("good", "tm_good");
    ASSERT_FALSE(is_mapped(path)) << "another test left the module loaded";
    EnginePtr engine = test::engine("cpu");
    KernelParams params;
    params.node = "n";
    params.inputs = {Layout(Shape{3}, DataType::f32)};
    params.outputs = {Layout(Shape{3}, DataType::f32)};
    params.engine = engine.get();

    ImplPtr impl;
    {
        auto reg = std::make_unique<Registry>();
        ModuleLoader::load_file(*reg, path);
        const auto impls = reg->impls("tm_good_op", "cpu");
        ASSERT_EQ(impls.size(), 1u);
        EXPECT_EQ(impls[0]->entry.check(params), "");
        impl = Registry::hold(impls[0]->entry.create(params), impls[0]->library);
    }   // registry destroyed here
    ASSERT_TRUE(is_mapped(path));

    auto stream = engine->create_stream();
    auto in = std::make_shared<Memory>(engine->allocate(12), params.inputs[0]);
    auto out = std::make_shared<Memory>(engine->allocate(12), params.outputs[0]);
    const float values[3] = {0.5f, -2.0f, 10.0f};
    in->buffer()->write(*stream, values, 0, sizeof values);
    std::vector<MemoryPtr> ins{in}, outs{out};
    ExecContext ctx{*stream, params, ins, outs};
    impl->execute(ctx);
    float result[3] = {};
    out->buffer()->read(*stream, result, 0, sizeof result);
    EXPECT_EQ(result[0], 2.0f);
    EXPECT_EQ(result[1], -3.0f);
    EXPECT_EQ(result[2], 21.0f);
    EXPECT_EQ(impl->name(), "tm_good_op_two_x_plus_one");

    // Releasing the last impl really unloads the module (no GNU-unique symbols
    // pinning it), which is what makes the check above meaningful.
    impl.reset();
    EXPECT_FALSE(is_mapped(path));
}

TEST(Registry, UnknownOp_ListsKnownOps) {
    Registry reg;
    ModuleLoader::load_file(reg, case_file("good", "tm_good"));
    try {
        reg.op("no_such_op");
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_EQ(e.context().field, "op");
        EXPECT_NE(std::string(e.what()).find("unknown op 'no_such_op'"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find("tm_good_op"), std::string::npos) << e.what();
    }
}

TEST(Registry, ImplEntryCheck_RejectsEngineTypeAndDtypeWithReasons) {
    struct FakeEngine : Engine {
        DeviceInfo di{"ocl", "fake", 0, 0};
        const DeviceInfo& info() const override { return di; }
        std::shared_ptr<Stream> create_stream() override { return nullptr; }
        std::shared_ptr<Buffer> do_allocate(size_t) override { return nullptr; }
    } fake;
    ImplEntry e;
    e.name = "x";
    e.impl_type = "gpu_only";
    e.dtypes = {DataType::f32};
    e.validate = [](const KernelParams& p) { return p.inputs.size() > 1 ? std::string("one input only") : ""; };
    KernelParams p;
    p.inputs = {Layout(Shape{2}, DataType::f32)};
    p.outputs = {Layout(Shape{2}, DataType::f32)};
    EXPECT_EQ(e.check(p), "");
    p.engine = &fake;
    EXPECT_NE(e.check(p).find("ocl"), std::string::npos);
    e.impl_type = "cpu";   // host impls map buffers: they run on any engine
    EXPECT_EQ(e.check(p), "");
    e.impl_type = "gpu_only";
    p.engine = nullptr;
    p.outputs[0].dtype = DataType::i32;
    EXPECT_NE(e.check(p).find("output 0"), std::string::npos);
    p.outputs[0].dtype = DataType::f32;
    p.inputs[0].dtype = DataType::f16;
    EXPECT_NE(e.check(p).find("input 0"), std::string::npos);
    p.inputs = {Layout(Shape{2}, DataType::f32), Layout(Shape{2}, DataType::f32)};
    EXPECT_EQ(e.check(p), "one input only");
}

TEST(Registry, HostStaticImpl_RefusesOtherLayouts) {
    Registry reg;
    auto record = std::make_shared<ModuleRecord>();
    record->path = "<test>";
    ModuleRegistrar r(reg, record);
    OpDefinition def;
    def.name = "copy_op";
    def.infer = [](const ShapeInferContext& c) { return std::vector<Layout>{c.inputs.at(0)}; };
    r.add_op(def);
    add_host_impls(r, "copy_op", [](HostCall& call) {
        for (size_t i = 0; i < call.out_shape(0).count(); ++i) call.set(0, i, call.get(0, i));
    });
    r.commit();
    const auto impls = reg.impls("copy_op", "cpu");
    ASSERT_EQ(impls.size(), 2u);
    EXPECT_EQ(impls[0]->entry.name, "cpu_ref_dynamic");
    EXPECT_EQ(impls[1]->entry.name, "cpu_ref_static");

    EnginePtr engine = test::engine("cpu");
    KernelParams p;
    p.node = "n";
    p.inputs = {Layout(Shape{2}, DataType::f16)};
    p.outputs = {Layout(Shape{2}, DataType::f16)};
    p.engine = engine.get();
    auto impl = Registry::hold(impls[1]->entry.create(p), impls[1]->library);
    EXPECT_EQ(impl->name(), "copy_op_cpu_ref_static");
    EXPECT_FALSE(impl->is_dynamic());

    auto stream = engine->create_stream();
    auto in = std::make_shared<Memory>(engine->allocate(8), Layout(Shape{4}, DataType::f16));
    auto out = std::make_shared<Memory>(engine->allocate(8), Layout(Shape{4}, DataType::f16));
    const uint16_t halves[2] = {float_to_half(1.5f), float_to_half(-0.25f)};
    in->buffer()->write(*stream, halves, 0, sizeof halves);
    std::vector<MemoryPtr> ins{in->reinterpret(p.inputs[0])}, outs{out->reinterpret(p.outputs[0])};
    ExecContext ctx{*stream, p, ins, outs};
    impl->execute(ctx);
    uint16_t got[2] = {};
    out->buffer()->read(*stream, got, 0, sizeof got);
    EXPECT_EQ(half_to_float(got[0]), 1.5f);
    EXPECT_EQ(half_to_float(got[1]), -0.25f);

    KernelParams other = p;
    other.inputs = {Layout(Shape{4}, DataType::f16)};
    other.outputs = {Layout(Shape{4}, DataType::f16)};
    ExecContext ctx2{*stream, other, ins, outs};
    EXPECT_THROW(impl->execute(ctx2), Error);

    // Padded layouts are refused with a reason.
    KernelParams padded = p;
    padded.inputs[0].padding.lower = {1};
    padded.inputs[0].padding.upper = {0};
    EXPECT_NE(impls[0]->entry.check(padded).find("padded"), std::string::npos);
}

// A registry with the op "tm_priority_op" (defined here) and the two priority
// test modules loaded in the given order.
std::shared_ptr<Registry> priority_registry(bool high_first) {
    auto reg = std::make_shared<Registry>();
    ModuleRegistrar in_process(*reg, nullptr);
    OpDefinition def;
    def.name = "tm_priority_op";
    def.infer = [](const ShapeInferContext& ctx) { return std::vector<Layout>{ctx.inputs.at(0)}; };
    in_process.add_op(def);
    in_process.commit();
    const std::string low = case_file("priority", "tm_aaa_low_priority");
    const std::string high = case_file("priority", "tm_zzz_high_priority");
    ModuleLoader::load_file(*reg, high_first ? high : low);
    ModuleLoader::load_file(*reg, high_first ? low : high);
    return reg;
}

TEST(Registry, ImplOrder_IsPriorityThenNameWhateverTheLoadOrder) {
    for (bool high_first : {true, false}) {
        SCOPED_TRACE(high_first ? "high-priority module loaded first" : "low-priority module loaded first");
        auto reg = priority_registry(high_first);
        const auto impls = reg->impls("tm_priority_op", "cpu");
        ASSERT_EQ(impls.size(), 2u);
        // "aaa_low" sorts first by name and by one load order: only the priority
        // puts "zzz_high" ahead in both.
        EXPECT_EQ(impls[0]->entry.name, "zzz_high");
        EXPECT_EQ(impls[1]->entry.name, "aaa_low");
        const auto all = reg->all_impls("tm_priority_op");
        ASSERT_EQ(all.size(), 2u);
        EXPECT_EQ(all[0]->entry.name, "zzz_high");

        // The flow runs the higher-priority impl (out = in + 100, not in + 1).
        auto program = std::make_shared<Program>(reg);
        program->add_input("x", Layout(PartialShape{Dimension::dynamic()}, DataType::f32));
        program->add_node("y", "tm_priority_op", {"x"});
        program->add_output("y");
        program->build();
        InferRequest req(Network::create(program, test::engine("cpu")));
        HostTensor x(DataType::f32, Shape{3});
        for (size_t i = 0; i < 3; ++i) x.as<float>()[i] = static_cast<float>(i);
        req.set_input("x", x);
        req.infer();
        EXPECT_EQ(req.output(0).as<float>()[2], 102.0f);
        EXPECT_EQ(req.inst("y").impl()->name(), "zzz_high");
    }
}

TEST(Registry, DefaultPriorities_DeviceStaticThenDeviceDynamicThenReference) {
    ImplEntry device_static, device_dynamic, reference;
    device_dynamic.shape_type = ShapeType::dynamic_shape;
    reference.reference = true;
    EXPECT_EQ(device_static.effective_priority(), kPriorityDeviceStatic);
    EXPECT_EQ(device_dynamic.effective_priority(), kPriorityDeviceDynamic);
    EXPECT_EQ(reference.effective_priority(), kPriorityReference);
    // Host reference impls tie: the dynamic one comes first by name, as before
    // priorities existed.
    const auto host = test::registry()->impls("cumsum", "cpu");
    ASSERT_GE(host.size(), 2u);
    EXPECT_EQ(host[0]->entry.name, "cpu_ref_dynamic");
    EXPECT_EQ(host[1]->entry.name, "cpu_ref_static");
    const auto ocl = test::registry()->impls("cumsum", "ocl");
    if (!ocl.empty()) {
        EXPECT_EQ(ocl[0]->entry.name, "ocl_static");
    }
}

TEST(Registry, RealModuleFolder_LoadsAndProvidesCpuEngine) {
    auto reg = test::registry();   // aborts the program listing failures if any module fails
    ASSERT_TRUE(reg->has_engine("cpu"));
    EnginePtr e = reg->create_engine("cpu", EngineConfig{"cpu", false});
    ASSERT_TRUE(e);
    EXPECT_EQ(e->info().type, "cpu");
    auto buf = e->allocate(100);
    EXPECT_GE(e->used_bytes(), 100u);
    EXPECT_EQ(e->allocation_count(), 1u);
    buf.reset();
    EXPECT_EQ(e->used_bytes(), 0u);
    EXPECT_THROW(reg->create_engine("no_such_device", EngineConfig{}), Error);
}

TEST(Memory, AllocateBeyondDeviceLimit_ThrowsNamingSizeAndDevice) {
    EnginePtr e = test::engine("cpu");
    const size_t limit = e->info().max_alloc_bytes;
    if (limit == 0 || limit == SIZE_MAX) GTEST_SKIP() << "device reports no allocation limit";
    try {
        e->allocate(limit + 1);
        FAIL() << "no error";
    } catch (const Error& err) {
        const std::string msg = err.what();
        EXPECT_NE(msg.find(std::to_string(limit + 1)), std::string::npos) << msg;
        EXPECT_NE(msg.find(e->info().name), std::string::npos) << msg;
    }
    EXPECT_EQ(e->used_bytes(), 0u);
}

TEST(Memory, Reinterpret_RefusesLayoutLargerThanBuffer) {
    EnginePtr e = test::engine("cpu");
    Memory m(e->allocate(16), Layout(Shape{4}, DataType::f32));
    EXPECT_NO_THROW(m.reinterpret(Layout(Shape{2, 2}, DataType::f32)));
    EXPECT_THROW(m.reinterpret(Layout(Shape{5}, DataType::f32)), Error);
}

TEST(OpSdk, BroadcastShapes_FollowsNumpyRulesWithDynamicDims) {
    const Dimension q = Dimension::dynamic();
    EXPECT_EQ(broadcast_shapes(PartialShape{2, 1, 4}, PartialShape{3, 1}), (PartialShape{2, 3, 4}));
    EXPECT_EQ(broadcast_shapes(PartialShape{q, 4}, PartialShape{1, 4}), (PartialShape{q, 4}));
    EXPECT_EQ(broadcast_shapes(PartialShape{q}, PartialShape{5}), (PartialShape{5}));
    EXPECT_EQ(broadcast_shapes(PartialShape{q}, PartialShape{q}), (PartialShape{q}));
    EXPECT_EQ(broadcast_shapes(PartialShape{}, PartialShape{3}), (PartialShape{3}));
    try {
        broadcast_shapes(PartialShape{2, 3}, PartialShape{4});
        FAIL() << "no error";
    } catch (const Error& e) {
        EXPECT_NE(std::string(e.what()).find("cannot broadcast [2,3] and [4]"), std::string::npos) << e.what();
    }
}

TEST(OpSdk, NormalizeAxisAndStrides_MatchHandComputedValues) {
    EXPECT_EQ(normalize_axis(-1, 3), 2);
    EXPECT_EQ(normalize_axis(0, 3), 0);
    EXPECT_THROW(normalize_axis(3, 3), Error);
    EXPECT_THROW(normalize_axis(-4, 3), Error);
    EXPECT_EQ(strides_of(Shape{2, 3, 4}), (std::vector<size_t>{12, 4, 1}));
    EXPECT_TRUE(strides_of(Shape{}).empty());
    EXPECT_THROW(expect_rank(Layout(Shape{2, 3}, DataType::f32), 3, "data"), Error);
    EXPECT_NO_THROW(expect_rank(Layout(Shape{2, 3}, DataType::f32), 2, "data"));
}

// Import rules (dynrt/op_import.hpp): found by format and model op name, and a
// model op claimed by two ops is refused naming both.
TEST(Registry, ImportRules_FoundByOpTypeAndAClaimByTwoOpsIsRefused) {
    Registry reg;
    ModuleRegistrar first(reg, nullptr);
    OpDefinition a;
    a.name = "tm_import_a";
    a.infer = [](const ShapeInferContext& ctx) { return std::vector<Layout>{ctx.inputs.at(0)}; };
    a.imports = {onnx_rule("TmShared", 1, 1, import_plain({{"mode", std::string("x")}}))};
    first.add_op(a);
    first.commit();
    const FoundImport f = reg.find_import("onnx", "TmShared");
    ASSERT_NE(f.rule, nullptr);
    EXPECT_EQ(f.op->def.name, "tm_import_a");
    EXPECT_EQ(reg.find_import("onnx", "TmOther").rule, nullptr);
    EXPECT_EQ(reg.find_import("other-format", "TmShared").rule, nullptr);

    // The rule maps a node without attributes and refuses one with an unknown one.
    ImportNode node;
    node.op_type = "TmShared";
    node.inputs.resize(1);
    node.inputs[0].present = true;
    ImportContext plain(node, "tm_import_a");
    EXPECT_TRUE(f.rule->map(plain));
    EXPECT_EQ(plain.out.attrs.get_string("mode"), "x");
    EXPECT_EQ(plain.out.inputs, std::vector<size_t>{0});
    node.attrs["alpha"].kind = ImportAttr::Kind::Float;
    ImportContext with_attr(node, "tm_import_a");
    EXPECT_FALSE(f.rule->map(with_attr));
    EXPECT_NE(with_attr.out.unsupported.find("attribute 'alpha'"), std::string::npos) << with_attr.out.unsupported;

    ModuleRegistrar second(reg, nullptr);
    OpDefinition b = a;
    b.name = "tm_import_b";
    second.add_op(b);
    try {
        second.commit();
        FAIL() << "no error";
    } catch (const Error& e) {
        const std::string msg = e.what();
        EXPECT_NE(msg.find("onnx op 'TmShared' is imported by both op 'tm_import_a'"), std::string::npos) << msg;
        EXPECT_NE(msg.find("'tm_import_b'"), std::string::npos) << msg;
    }
    EXPECT_EQ(reg.find_op("tm_import_b"), nullptr);
}
