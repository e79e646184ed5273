// The .npy reader on arbitrary bytes: a tensor or a dynrt::Error, nothing else
// (no crash, no other exception, no allocation bigger than the data present).
#include <cstddef>
#include <cstdint>
#include <string>

#include "dynrt/error.hpp"
#include "pipeline.hpp"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
    try {
        (void)dynrt::pipeline::parse_npy(std::string(reinterpret_cast<const char*>(data), size), "fuzz.npy");
    } catch (const dynrt::Error&) {
    }
    return 0;
}
