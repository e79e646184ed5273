// graph_fuzz: the differential graph fuzzer (fuzz_graph.hpp) without
// libFuzzer, for any build (Release included) and any engine under test.
// Each run draws random bytes from a seed and decodes them as the harness
// does; a finding's bytes are written to the findings folder (replay them
// with replay_graph, or copy them into fuzz/regressions/graph/).
//
//   graph_fuzz [--seconds T] [--runs N] [--seed S] [--device cpu|ocl]
//              [--threads N] [--findings DIR] [--keep-going] [--print]
//
// It stops at the first finding unless --keep-going; it exits 1 when there
// was one, 0 otherwise, and prints how often each pass acted.
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <random>
#include <string>
#include <vector>

#include "dynrt/error.hpp"
#include "fuzz_graph.hpp"
#include "fuzz_registry.hpp"

int main(int argc, char** argv) {
    using namespace dynrt::fuzz::graph;
    double seconds = 0;
    uint64_t runs = 0, seed = 1;
    std::string device = "cpu", findings = "graph_fuzz_findings";
    unsigned threads = 1;
    bool keep_going = false, print = false;
    for (int i = 1; i < argc; ++i) {
        const std::string a = argv[i];
        auto value = [&]() -> std::string {
            if (i + 1 >= argc) {
                std::fprintf(stderr, "graph_fuzz: %s needs a value\n", a.c_str());
                std::exit(2);
            }
            return argv[++i];
        };
        if (a == "--seconds") seconds = std::stod(value());
        else if (a == "--runs") runs = std::stoull(value());
        else if (a == "--seed") seed = std::stoull(value());
        else if (a == "--device") device = value();
        else if (a == "--threads") threads = static_cast<unsigned>(std::stoul(value()));
        else if (a == "--findings") findings = value();
        else if (a == "--keep-going") keep_going = true;
        else if (a == "--print") print = true;
        else {
            std::fprintf(stderr,
                         "usage: graph_fuzz [--seconds T] [--runs N] [--seed S] [--device cpu|ocl] [--threads N] "
                         "[--findings DIR] [--keep-going] [--print]\n");
            return 2;
        }
    }
    if (seconds <= 0 && runs == 0) runs = 100;

    Engines e;
    e.registry = dynrt::fuzz::registry();
    dynrt::EngineConfig cfg;
    cfg.threads = threads;
    cfg.device = "cpu";
    e.reference = e.registry->create_engine("cpu", cfg);
    cfg.device = device;
    const std::string type = device.substr(0, device.find(':'));
    try {
        e.under_test = e.registry->create_engine(type, cfg);
    } catch (const dynrt::Error& ex) {
        std::fprintf(stderr, "graph_fuzz: no %s engine: %s\n", device.c_str(), ex.what());
        return 2;
    }

    const auto start = std::chrono::steady_clock::now();
    auto elapsed = [&] { return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count(); };
    uint64_t done = 0, ran = 0, failed = 0, found = 0;
    Coverage total;
    for (uint64_t k = 0; (runs == 0 || k < runs) && (seconds <= 0 || elapsed() < seconds); ++k) {
        std::mt19937_64 rng(seed * 0x100000001b3ULL + k);
        std::vector<uint8_t> bytes(64 + rng() % 449);
        for (auto& b : bytes) b = static_cast<uint8_t>(rng());
        const Result r = check(bytes.data(), bytes.size(), e, true);
        ++done;
        ran += r.ran;
        failed += r.both_failed;
        const Coverage& c = r.coverage;
        total.views += c.views;
        total.fused_runs += c.fused_runs;
        total.unfused_runs += c.unfused_runs;
        total.concat_inplace += c.concat_inplace;
        total.fake_aligned += c.fake_aligned;
        total.pool_hits += c.pool_hits;
        total.folded_nodes += c.folded_nodes;
        total.import_folded += c.import_folded;
        total.import_fused += c.import_fused;
        if (print)
            std::printf("-- seed %llu run %llu\n%s", static_cast<unsigned long long>(seed),
                        static_cast<unsigned long long>(k), r.graph.c_str());
        if (r.finding.empty()) continue;
        ++found;
        std::filesystem::create_directories(findings);
        const std::string path =
            findings + "/seed" + std::to_string(seed) + "_run" + std::to_string(k) + "_" + device + ".bin";
        std::ofstream(path, std::ios::binary)
            .write(reinterpret_cast<const char*>(bytes.data()), static_cast<std::streamsize>(bytes.size()));
        std::printf("graph_fuzz: FINDING (run %llu, saved as %s)\n%s%s\n", static_cast<unsigned long long>(k),
                    path.c_str(), r.graph.c_str(), r.finding.c_str());
        std::fflush(stdout);
        if (!keep_going) break;
    }
    std::printf(
        "graph_fuzz: %llu graphs on %s in %.0f s (seed %llu): %llu ran, %llu failed the same way in both "
        "runs, %llu findings\n",
        static_cast<unsigned long long>(done), device.c_str(), elapsed(), static_cast<unsigned long long>(seed),
        static_cast<unsigned long long>(ran), static_cast<unsigned long long>(failed),
        static_cast<unsigned long long>(found));
    std::printf(
        "graph_fuzz: passes acted (runs with every pass on): views %llu, fused runs %llu, unfused runs %llu, "
        "in-place concats %llu, fake-aligned %llu, pool hits %llu, program folds %llu, import folds %llu, "
        "import pattern fusions %llu\n",
        static_cast<unsigned long long>(total.views), static_cast<unsigned long long>(total.fused_runs),
        static_cast<unsigned long long>(total.unfused_runs), static_cast<unsigned long long>(total.concat_inplace),
        static_cast<unsigned long long>(total.fake_aligned), static_cast<unsigned long long>(total.pool_hits),
        static_cast<unsigned long long>(total.folded_nodes), static_cast<unsigned long long>(total.import_folded),
        static_cast<unsigned long long>(total.import_fused));
    return found > 0 ? 1 : 0;
}
