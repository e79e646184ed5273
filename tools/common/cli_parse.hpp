// Command-line parsing shared by the tools' subcommands (header-only: the
// users link Boost::program_options themselves).
#pragma once

#include <boost/program_options.hpp>
#include <iostream>
#include <optional>

namespace dynrt::tools {

// Parses argv into `vm`. Returns 2 after printing "<prog>: <error>" on a bad
// command line, 0 after printing the options for --help, else nothing (go on).
inline std::optional<int> parse_command_line(int argc, char** argv,
                                             const boost::program_options::options_description& desc,
                                             const boost::program_options::positional_options_description& pos,
                                             boost::program_options::variables_map& vm, const char* prog) {
    namespace po = boost::program_options;
    try {
        po::store(po::command_line_parser(argc, argv).options(desc).positional(pos).run(), vm);
        po::notify(vm);
    } catch (const po::error& e) {
        std::cerr << prog << ": " << e.what() << "\n";
        return 2;
    }
    if (vm.count("help")) {
        std::cout << desc << "\n";
        return 0;
    }
    return std::nullopt;
}

}   // namespace dynrt::tools
