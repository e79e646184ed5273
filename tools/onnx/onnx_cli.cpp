// `dynrt onnx-test PATH... [options]`: ONNX node tests on one device.
//
// Exit codes: 0 no case failed (unsupported cases do not fail, except with
// --strict), 1 a case failed or errored, 2 bad command line, 77 with --skip-missing when the data folder or
// the device is not there (ctest's skip code).
#include <algorithm>
#include <boost/program_options.hpp>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <sstream>

#include "cli_parse.hpp"
#include "dynrt/error.hpp"
#include "dynrt/module_loader.hpp"
#include "dynrt/passes.hpp"
#include "onnx_import.hpp"

namespace po = boost::program_options;

namespace {

// --bisect: every model folder among `paths` (a folder holding model.onnx, or
// the model folders inside one).
int bisect(const std::shared_ptr<const dynrt::Registry>& registry, const std::vector<std::string>& paths,
           const dynrt::onnx::TestOptions& opt) {
    namespace fs = std::filesystem;
    std::vector<std::string> folders;
    for (const std::string& p : paths) {
        if (fs::exists(fs::path(p) / "model.onnx")) {
            folders.push_back(p);
            continue;
        }
        std::vector<std::string> subs;
        if (fs::is_directory(p))
            for (const auto& e : fs::directory_iterator(p))
                if (fs::exists(e.path() / "model.onnx")) subs.push_back(e.path().string());
        if (subs.empty()) {
            std::cerr << "dynrt onnx-test: " << p << ": no model.onnx in it or in its folders\n";
            return 1;
        }
        std::sort(subs.begin(), subs.end());
        folders.insert(folders.end(), subs.begin(), subs.end());
    }
    dynrt::onnx::BisectOptions bo;
    bo.device = opt.device;
    bo.passes = opt.passes;
    bo.rtol = opt.rtol;
    bo.atol = opt.atol;
    bo.dynamic_pass = opt.dynamic_pass;
    bool failed = false;
    for (const std::string& f : folders) {
        try {
            const dynrt::onnx::BisectReport r = dynrt::onnx::bisect(registry, f, bo);
            std::cout << dynrt::onnx::bisect_text(r) << std::flush;
            failed = failed || r.failed();
        } catch (const std::exception& e) {
            std::cout << "bisect " << f << ": error: " << e.what() << std::endl;
            failed = true;
        }
    }
    return failed ? 1 : 0;
}

// --each-pass-off: the folders once as configured and once more with each
// pass that is on turned off alone (the switchboard's table, so a pass added
// later is tried too). A case that fails in any of these runs is printed with
// the pass that was off, and its model folder is bisected under the same
// passes, naming the first node whose output differs. Exit 1 when any run
// failed.
int each_pass_off(const std::shared_ptr<const dynrt::Registry>& registry, const std::vector<std::string>& paths,
                  const dynrt::onnx::TestOptions& opt) {
    using namespace dynrt;
    std::vector<std::pair<std::string, PassSet>> runs{{"as configured (" + opt.passes.to_string() + ")", opt.passes}};
    for (const PassInfo& p : passes()) {
        if (!opt.passes.on(p.name)) continue;
        PassSet off = opt.passes;
        off.set(p.name, false);
        runs.emplace_back(std::string(p.name) + " off", off);
    }
    size_t failed_runs = 0;
    for (const auto& [label, set] : runs) {
        onnx::TestOptions o = opt;
        o.passes = set;
        const onnx::TestReport r = onnx::run_tests(registry, paths, o);
        const size_t bad = r.failed + r.errors + (opt.strict ? r.unsupported : 0);
        std::cout << "passes " << label << ": " << r.passed << " passed, " << r.failed << " failed, " << r.errors
                  << " errors, " << r.unsupported << " unsupported\n";
        if (bad == 0) continue;
        ++failed_runs;
        std::vector<std::string> folders;
        for (const onnx::CaseResult& c : r.cases) {
            if (c.status == "pass" || (c.status == "unsupported" && !opt.strict)) continue;
            std::cout << "  " << c.status << "  " << c.folder << "/" << c.data_set << " with passes " << label << ": "
                      << c.detail << "\n";
            const std::string folder = std::filesystem::path(c.path).string();
            if (std::find(folders.begin(), folders.end(), folder) == folders.end()) folders.push_back(folder);
        }
        onnx::BisectOptions bo;
        bo.device = opt.device;
        bo.passes = set;
        bo.rtol = opt.rtol;
        bo.atol = opt.atol;
        bo.dynamic_pass = opt.dynamic_pass;
        for (const std::string& f : folders) {
            try {
                std::cout << onnx::bisect_text(onnx::bisect(registry, f, bo));
            } catch (const std::exception& e) {
                std::cout << "bisect " << f << ": error: " << e.what() << "\n";
            }
        }
    }
    std::cout << "each pass off: " << runs.size() << " runs, " << failed_runs << " with failures\n" << std::flush;
    return failed_runs ? 1 : 0;
}

}   // namespace

int dynrt_onnx_test_main(int argc, char** argv) {
    using namespace dynrt;
    po::options_description desc(
        "usage: dynrt onnx-test PATH... [options]\n\n"
        "Runs ONNX node-test folders (model.onnx + test_data_set_*/input_N.pb,\n"
        "output_N.pb), or every such folder inside PATH, on one device: each case\n"
        "once on a static network and once with every input dim dynamic, compared\n"
        "with rtol 1e-3, atol 1e-7 (integers exactly). Prints failures and a summary\n"
        "per op (docs/conformance.md).\n\noptions");
    std::vector<std::string> paths, ops, of_ops, modules_dirs;
    desc.add_options()("help,h", "show this help")("device", po::value<std::string>()->default_value("cpu"),
                                                   "engine type: cpu, ocl")(
        "ops", po::value<std::vector<std::string>>(&ops)->composing(),
        "only these ONNX op types (comma-separated, repeatable)")(
        "of-op", po::value<std::vector<std::string>>(&of_ops)->composing(),
        "only the ONNX ops this dynrt op maps (repeatable); with --skip-missing, exit 77 when it maps none")(
        "graphs", "only the models of several nodes (the *_expanded folders ...)")(
        "strict", "exit 1 when a case is unsupported too (for model folders that must run)")(
        "list-claimed", "print the ONNX ops dynrt claims (with the loaded modules) and exit")(
        "markdown", po::value<std::string>(), "write the per-op case table as markdown to this file")(
        "no-dynamic", "skip the second, dynamic-shape run of each case")(
        "rtol", po::value<double>()->default_value(1e-3), "relative tolerance (floating outputs)")(
        "atol", po::value<double>()->default_value(1e-7), "absolute tolerance (floating outputs)")(
        "skip-missing", "exit 77 when a PATH or the device is missing")(
        "modules-dir", po::value<std::vector<std::string>>(&modules_dirs)->composing(),
        "module folder (repeatable); replaces DYNRT_MODULE_PATH and the default folder")(
        "bisect",
        "per model folder: the first tensor that differs from the reference run (every pass off, the cpu "
        "reference impls) and the pass that changed it; exit 1 when one differs (docs/onnx.md)")(
        "each-pass-off",
        "run the folders as configured, then once with each pass that is on turned off alone; a failure "
        "names the pass and is bisected to its first differing node (docs/onnx.md)")(
        "passes", po::value<std::string>(),
        "switch passes off or on: \"-fusion,-views\", \"fusion=off\", \"none\" (applied over DYNRT_PASSES; "
        "docs/onnx.md)")("verbose,v", "print passing cases too")("path", po::value<std::vector<std::string>>(&paths),
                                                                 "test folders");
    po::positional_options_description pos;
    pos.add("path", -1);
    po::variables_map vm;
    if (const auto done = tools::parse_command_line(argc, argv, desc, pos, vm, "dynrt onnx-test")) return *done;
    onnx::TestOptions opt;
    opt.device = vm["device"].as<std::string>();
    for (const std::string& o : ops) {
        std::istringstream items(o);
        std::string item;
        while (std::getline(items, item, ','))
            if (!item.empty()) opt.ops.push_back(item);
    }
    opt.rtol = vm["rtol"].as<double>();
    opt.atol = vm["atol"].as<double>();
    opt.dynamic_pass = !vm.count("no-dynamic");
    opt.verbose = vm.count("verbose") != 0;
    opt.graphs_only = vm.count("graphs") != 0;
    opt.strict = vm.count("strict") != 0;
    const bool skip_missing = vm.count("skip-missing") != 0;
    // DYNRT_PASSES first, then --passes over it (a bad spec from either is a
    // bad command line).
    try {
        if (const char* env = std::getenv("DYNRT_PASSES"); env && *env) opt.passes.apply(env, "DYNRT_PASSES");
        if (vm.count("passes")) opt.passes.apply(vm["passes"].as<std::string>(), "--passes");
    } catch (const Error& e) {
        std::cerr << "dynrt onnx-test: " << e.what() << "\n";
        return 2;
    }
    if (!opt.passes.all_on()) std::cerr << "dynrt onnx-test: passes " << opt.passes.to_string() << "\n";
    try {
        auto registry = std::make_shared<Registry>();
        const LoadReport lr = ModuleLoader::load_dirs(*registry, ModuleLoader::search_path(modules_dirs));
        for (const auto& f : lr.failed) std::cerr << "dynrt: warning: " << f.message << "\n";
        if (vm.count("list-claimed")) {
            for (const auto& [op, target] : onnx::claimed_ops(*registry)) std::cout << op << " " << target << "\n";
            return 0;
        }
        const size_t explicit_ops = opt.ops.size();
        for (const std::string& dynrt_op : of_ops) {
            size_t found = 0;
            for (const auto& [op, target] : onnx::claimed_ops(*registry))
                if (target == dynrt_op) {
                    opt.ops.push_back(op);
                    ++found;
                }
            if (found == 0) {
                std::cout << "dynrt onnx-test: dynrt op '" << dynrt_op << "' maps no ONNX op"
                          << (skip_missing ? ": skipped\n" : "\n");
                return skip_missing ? 77 : 1;
            }
        }
        if (paths.empty()) {
            std::cerr << "dynrt onnx-test: missing PATH (a node-test folder or a folder of them)\n";
            return 2;
        }
        if (skip_missing) {
            for (const std::string& p : paths)
                if (!std::filesystem::exists(p)) {
                    std::cout << "dynrt onnx-test: " << p << " does not exist: skipped\n";
                    return 77;
                }
            if (!registry->has_engine(opt.device)) {
                std::cout << "dynrt onnx-test: no '" << opt.device << "' engine is registered: skipped\n";
                return 77;
            }
            try {
                EngineConfig cfg;
                cfg.device = opt.device;
                registry->create_engine(opt.device, cfg);
            } catch (const std::exception& e) {
                std::cout << "dynrt onnx-test: device '" << opt.device << "' unavailable (" << e.what()
                          << "): skipped\n";
                return 77;
            }
        }
        if (vm.count("bisect")) return bisect(registry, paths, opt);
        if (vm.count("each-pass-off")) return each_pass_off(registry, paths, opt);
        const onnx::TestReport report = onnx::run_tests(registry, paths, opt);
        std::cout << onnx::summary_text(report, opt.verbose);
        if (vm.count("markdown")) {
            std::ofstream md(vm["markdown"].as<std::string>());
            if (!md) {
                ErrorContext where;
                where.file = vm["markdown"].as<std::string>();
                throw Error("cannot write the markdown file", where);
            }
            md << onnx::summary_markdown(report, opt);
        }
        if (explicit_ops > 0) {
            for (size_t k = 0; k < explicit_ops; ++k) {
                const std::string& op = opt.ops[k];
                const bool any = std::any_of(report.cases.begin(), report.cases.end(),
                                             [&](const onnx::CaseResult& c) { return c.onnx_op == op; });
                if (!any) {
                    std::cerr << "dynrt onnx-test: no node test of op " << op << " was found\n";
                    return 1;
                }
            }
        }
        if (opt.strict && report.unsupported > 0) {
            std::cerr << "dynrt onnx-test: " << report.unsupported << " unsupported case(s) with --strict\n";
            return 1;
        }
        return report.failed + report.errors > 0 ? 1 : 0;
    } catch (const std::exception& e) {
        std::cerr << "dynrt onnx-test: error: " << e.what() << "\n";
        return 1;
    }
}
