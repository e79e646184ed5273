// Every pipeline in configs/ on the ocl device against the cpu device: the first
// schedule entries of each, run through the pipeline library on both engines,
// must give the same outputs within tolerance, once with the shape-agnostic
// impls (as configured) and once with static impls only. Skipped when the ocl
// module is not built or no OpenCL platform exists.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "dynrt/error.hpp"
#include "pipeline.hpp"
#include "test_support.hpp"

namespace fs = std::filesystem;
using namespace dynrt;
using namespace dynrt::pipeline;

namespace {

const std::string kSource = DYNRT_SOURCE_DIR;

// The OpenCL binary cache of this test program lives in a temp folder
// (removed at exit), so a run never depends on the user's cache.
class CacheDir {
public:
    CacheDir() {
        std::string tmpl = (fs::temp_directory_path() / "dynrt_test_XXXXXX").string();
        if (mkdtemp(tmpl.data()) != nullptr) {
            dir_ = tmpl;
            setenv("DYNRT_CACHE_DIR", dir_.c_str(), 1);
        }
    }
    ~CacheDir() {
        std::error_code ec;
        if (!dir_.empty()) fs::remove_all(dir_, ec);
    }

private:
    std::string dir_;
};
const CacheDir kCacheDir;

bool have_ocl() {
    if (!test::registry()->has_engine("ocl")) return false;
    try {
        test::engine("ocl");
        return true;
    } catch (const Error&) {
        return false;
    }
}

std::vector<std::string> config_files() {
    std::vector<std::string> files;
    for (const auto& entry : fs::directory_iterator(kSource + "/configs"))
        if (entry.path().extension() == ".yaml") files.push_back(entry.path().string());
    std::sort(files.begin(), files.end());
    return files;
}

RunResult run_on(const Pipeline& p, const std::string& device, size_t max_runs) {
    RunOptions o;
    o.device = device;
    o.use_env_prealloc = false;
    o.keep_outputs = true;
    o.max_runs = max_runs;
    return run_pipeline(p, o);
}

// Tolerance: |ocl - cpu| <= 1e-3 * |cpu| + 1e-4. The pipelines chain matrix
// products (K up to 128), softmax and gelu; the device sums in another order
// and in float where the host reference uses double, so the outputs differ in
// the last float digits, amplified a little through the chain.
constexpr double kRtol = 1e-3, kAtol = 1e-4;

void compare(const RunResult& ocl, const RunResult& cpu, const Pipeline& p) {
    ASSERT_EQ(ocl.runs.size(), cpu.runs.size());
    for (size_t k = 0; k < cpu.runs.size(); ++k) {
        SCOPED_TRACE("run " + std::to_string(k) + " (" + cpu.runs[k].label + ")");
        for (const std::string& name : p.outputs) {
            SCOPED_TRACE("output " + name);
            const HostTensor& got = ocl.runs[k].outputs.at(name);
            const HostTensor& want = cpu.runs[k].outputs.at(name);
            ASSERT_EQ(got.dtype(), want.dtype());
            ASSERT_EQ(got.shape(), want.shape());
            size_t bad = 0;
            for (size_t i = 0; i < want.count(); ++i) {
                const double g = got.get_as_double(i), w = want.get_as_double(i);
                if (!(std::fabs(g - w) <= kAtol + kRtol * std::fabs(w)) && bad++ < 5)
                    ADD_FAILURE() << "element " << i << ": ocl " << g << ", cpu " << w;
            }
            EXPECT_EQ(bad, 0u);
        }
    }
}

// Nodes that ran an OpenCL impl over all runs (the comparison would be empty
// if everything fell back to the host impls).
size_t ocl_node_runs(const RunResult& r) {
    size_t n = 0;
    for (const RunRecord& rec : r.runs)
        for (const NodeStats& s : rec.stats.nodes)
            if (s.impl.find("_ocl_") != std::string::npos) ++n;
    return n;
}

TEST(OclPipelines, EveryShippedConfig_MatchesCpuWithShapeAgnosticImpls) {
    if (!have_ocl()) GTEST_SKIP() << "no ocl engine";
    const std::vector<std::string> files = config_files();
    ASSERT_FALSE(files.empty());
    for (const std::string& file : files) {
        SCOPED_TRACE(file);
        const Pipeline p = load_pipeline(file, test::registry());
        const RunResult cpu = run_on(p, "cpu", 3);
        const RunResult ocl = run_on(p, "ocl", 3);
        EXPECT_EQ(ocl.device, "ocl");
        EXPECT_EQ(cpu.runs.size(), std::min<size_t>(3, p.runs.size()));
        EXPECT_GT(ocl_node_runs(ocl), 0u);
        compare(ocl, cpu, p);
    }
}

TEST(OclPipelines, EveryShippedConfig_MatchesCpuWithStaticImpls) {
    if (!have_ocl()) GTEST_SKIP() << "no ocl engine";
    for (const std::string& file : config_files()) {
        SCOPED_TRACE(file);
        Pipeline p = load_pipeline(file, test::registry());
        p.run.dynamic_impls = false;
        p.run.async_compile = false;
        const RunResult cpu = run_on(p, "cpu", 2);
        const RunResult ocl = run_on(p, "ocl", 2);
        EXPECT_GT(ocl_node_runs(ocl), 0u);
        for (const RunRecord& rec : ocl.runs)
            for (const NodeStats& s : rec.stats.nodes)
                EXPECT_EQ(s.impl.find("_ocl_dynamic"), std::string::npos) << s.node << ": " << s.impl;
        compare(ocl, cpu, p);
    }
}

}   // namespace
