// `dynrt test-op OP [options]`: the op harness on the command line.
//
// Exit codes: 0 every row passed (and at least one ran), 1 a failure, an error,
// or nothing ran, 2 bad command line.
#include <boost/program_options.hpp>
#include <cstdint>
#include <fstream>
#include <iostream>

#include "cli_parse.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "harness.hpp"
#include "int_range.hpp"

namespace po = boost::program_options;

namespace {

bool file_exists(const std::string& p) { return static_cast<bool>(std::ifstream(p)); }

// ops/<op>/sweep.txt under the working folder, else the installed copy.
std::string default_sweep_file(const std::string& op) {
    std::string local = "ops/" + op + "/sweep.txt";
    if (file_exists(local)) return local;
    const std::string mod = dynrt::ModuleLoader::default_module_dir();   // <prefix>/lib/dynrt
    std::string installed = mod + "/../../share/dynrt/sweeps/" + op + ".txt";
    if (file_exists(installed)) return installed;
    return {};
}

}   // namespace

int dynrt_test_op_main(int argc, char** argv) {
    using namespace dynrt;
    po::options_description desc(
        "usage: dynrt test-op OP [options]\n\n"
        "Builds a one-node network for OP, runs the reference impl and every other\n"
        "registered impl that validates over a shape sweep and compares them\n"
        "(docs/test-op.md). Without --shapes or --sweep-file, ops/OP/sweep.txt\n"
        "is used when it exists.\n\noptions");
    std::vector<std::string> attrs, shapes, devices, impls, modules_dirs;
    desc.add_options()("help,h", "show this help")("attr", po::value<std::vector<std::string>>(&attrs)->composing(),
                                                   "attribute k=v (repeatable)")(
        "shapes", po::value<std::vector<std::string>>(&shapes)->composing(),
        "cases, e.g. \"[2,1..64,16]\", \"x=[b,k] w=[n,k] b=1..4 k=16 n=8\", \"[1,3];[2,5]\" (repeatable)")(
        "sweep-file", po::value<std::string>(), "sweep file (ops/<op>/sweep.txt format)")(
        "random", po::value<std::string>()->default_value("0"),
        "N random cases per template instead of every combination (0..1000000)")(
        "seed", po::value<std::string>()->default_value("1"), "seed of random cases and input data (>= 0)")(
        "dtype", po::value<std::string>()->default_value("f32"), "data type of inputs without their own :dtype")(
        "device", po::value<std::vector<std::string>>(&devices)->composing(),
        "impl types to test: cpu, ocl, all (repeatable; default all)")(
        "impl", po::value<std::vector<std::string>>(&impls)->composing(), "only this impl (repeatable)")(
        "reference", po::value<std::string>(), "reference impl (default: cpu_ref_static)")(
        "rtol", po::value<double>(),
        "relative tolerance (default per dtype: f32 1e-4, f16 1e-2, f64 1e-12, integers 0)")(
        "atol", po::value<double>(),
        "absolute tolerance (default per dtype: f32 1e-5, f16 1e-3, f64 1e-14, integers 0)")(
        "no-revisit", "dynamic impls: run the sweep once, without the revisiting pass")(
        "bench", "time every impl on every case (median of --repeat runs)")(
        "repeat", po::value<std::string>()->default_value("5"), "timed runs per case with --bench (1..1000000)")(
        "json", "print the report as JSON")(
        "modules-dir", po::value<std::vector<std::string>>(&modules_dirs)->composing(),
        "module folder (repeatable); replaces DYNRT_MODULE_PATH and the default folder")(
        "verbose,v", "module folders and engine details on stderr")("op", po::value<std::string>(), "the op to test");
    po::positional_options_description pos;
    pos.add("op", 1);
    po::variables_map vm;
    if (const auto done = tools::parse_command_line(argc, argv, desc, pos, vm, "dynrt test-op")) return *done;
    if (!vm.count("op")) {
        std::cerr << "dynrt test-op: missing OP (see dynrt test-op --help; dynrt ops lists them)\n";
        return 2;
    }
    harness::Options opt;
    opt.op = vm["op"].as<std::string>();
    for (const std::string& a : attrs) {
        const size_t eq = a.find('=');
        if (eq == std::string::npos || eq == 0) {
            std::cerr << "dynrt test-op: --attr '" << a << "' is not k=v\n";
            return 2;
        }
        opt.attrs.emplace_back(a.substr(0, eq), a.substr(eq + 1));
    }
    opt.shapes = shapes;
    if (vm.count("sweep-file")) opt.sweep_file = vm["sweep-file"].as<std::string>();
    // Counts as int64 in a range: boost would read "-1" as 2^64-1.
    int64_t number = 0;
    auto integer = [&](const char* name, int64_t min, int64_t max) {
        const std::string text = vm[name].as<std::string>();
        if (tools::parse_int64(text, number) && number >= min && number <= max) return true;
        std::cerr << "dynrt test-op: --" << name << " must be an integer in " << min << ".." << max << ", got '" << text
                  << "'\n";
        return false;
    };
    if (!integer("random", 0, 1000000)) return 2;
    opt.random = static_cast<size_t>(number);
    if (!integer("seed", 0, INT64_MAX)) return 2;
    opt.seed = static_cast<uint64_t>(number);
    try {
        opt.dtype = parse_data_type(vm["dtype"].as<std::string>());
    } catch (const Error& e) {
        std::cerr << "dynrt test-op: --dtype: " << e.message() << "\n";
        return 2;
    }
    opt.devices = devices;
    opt.impls = impls;
    if (vm.count("reference")) opt.reference = vm["reference"].as<std::string>();
    if (vm.count("rtol")) opt.rtol = vm["rtol"].as<double>();
    if (vm.count("atol")) opt.atol = vm["atol"].as<double>();
    opt.revisit = !vm.count("no-revisit");
    opt.bench = vm.count("bench") != 0;
    if (!integer("repeat", 1, 1000000)) return 2;
    opt.repeat = static_cast<size_t>(number);
    opt.verbose = vm.count("verbose") != 0;
    if (opt.shapes.empty() && opt.sweep_file.empty()) opt.sweep_file = default_sweep_file(opt.op);

    try {
        auto registry = std::make_shared<Registry>();
        const auto path = ModuleLoader::search_path(modules_dirs);
        if (opt.verbose) {
            std::cerr << "dynrt: module folders:";
            for (const auto& d : path) std::cerr << " " << d;
            std::cerr << "\n";
        }
        const LoadReport lr = ModuleLoader::load_dirs(*registry, path);
        for (const auto& f : lr.failed) std::cerr << "dynrt: warning: " << f.message << "\n";
        const harness::Report report = harness::run(registry, opt);
        std::cout << (vm.count("json") ? harness::to_json(report) : harness::format_table(report, opt.bench));
        if (report.failed > 0) return 1;
        if (report.passed == 0) {
            std::cerr << "dynrt test-op: no impl ran any case (every row is not applicable)\n";
            return 1;
        }
        return 0;
    } catch (const std::exception& e) {
        std::cerr << "dynrt test-op: error: " << e.what() << "\n";
        return 1;
    }
}
