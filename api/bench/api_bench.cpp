// dynrt_api_bench MODEL DATA_DIR RUNS WARMUP DEVICE THREADS: the time of one
// run through the C++ embedding API (set every input from DATA_DIR's
// input_<i>.pb, run, read every output), the figure scripts/bench_python.py
// puts the Python package's time next to (docs/python.md). Prints one JSON
// object: the median and mean microseconds per run over RUNS runs after
// WARMUP runs. A measuring aid, not a test.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <numeric>
#include <string>
#include <vector>

#include "dynrt/dynrt.hpp"

int main(int argc, char** argv) {
    if (argc != 7) {
        std::fprintf(stderr, "usage: dynrt_api_bench MODEL DATA_DIR RUNS WARMUP DEVICE THREADS\n");
        return 2;
    }
    try {
        dynrt::ModelOptions options;
        options.device = argv[5];
        options.threads = static_cast<unsigned>(std::atoi(argv[6]));
        const dynrt::Model model(argv[1], options);
        std::vector<dynrt::HostTensor> inputs;
        for (size_t i = 0; i < model.inputs().size(); ++i)
            inputs.push_back(dynrt::load_tensor(std::string(argv[2]) + "/input_" + std::to_string(i) + ".pb"));
        const int runs = std::max(1, std::atoi(argv[3])), warmup = std::max(0, std::atoi(argv[4]));
        dynrt::Request request = model.create_request();
        std::vector<double> us;
        double sink = 0;
        for (int k = 0; k < warmup + runs; ++k) {
            const auto t0 = std::chrono::steady_clock::now();
            for (size_t i = 0; i < inputs.size(); ++i)
                request.set_input(model.inputs()[i].name, inputs[i].dtype(), inputs[i].shape(), inputs[i].data());
            request.run();
            for (size_t o = 0; o < model.outputs().size(); ++o) sink += request.output(o).get_as_double(0);
            const auto t1 = std::chrono::steady_clock::now();
            if (k >= warmup) us.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        }
        const double mean = std::accumulate(us.begin(), us.end(), 0.0) / static_cast<double>(us.size());
        std::nth_element(us.begin(), us.begin() + static_cast<std::ptrdiff_t>(us.size() / 2), us.end());
        std::printf("{\"median_us\": %.3f, \"mean_us\": %.3f, \"runs\": %d, \"device\": \"%s\", \"check\": %g}\n",
                    us[us.size() / 2], mean, runs, model.device().c_str(), sink);
    } catch (const dynrt::Error& e) {
        std::fprintf(stderr, "dynrt_api_bench: %s\n", e.what());
        return 1;
    }
    return 0;
}
