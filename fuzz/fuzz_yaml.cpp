// The YAML pipeline loader on arbitrary text, against every in-tree op: a
// Pipeline or a dynrt::Error naming the file, nothing else.
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "dynrt/error.hpp"
#include "fuzz_registry.hpp"
#include "pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    static const std::shared_ptr<const dynrt::Registry> registry = dynrt::fuzz::registry();
    try {
        (void)dynrt::pipeline::load_pipeline_text(std::string(reinterpret_cast<const char*>(data), size), "fuzz.yaml",
                                                  "/nonexistent", registry);
    } catch (const dynrt::Error&) {
    }
    return 0;
}
