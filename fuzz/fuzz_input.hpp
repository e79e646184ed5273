// A cursor over a fuzzer's bytes: harnesses draw sizes, choices and values
// from it. Past the end every draw returns 0, so any input decodes to
// something and the same input always decodes to the same thing.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

namespace dynrt::fuzz {

class Input {
public:
    Input(const uint8_t* data, size_t size) : data_(data), size_(size) {}
    uint8_t byte() { return pos_ < size_ ? data_[pos_++] : 0; }
    // A value in [0, n) (0 when n is 0).
    size_t pick(size_t n) { return n == 0 ? 0 : u64() % n; }
    uint64_t u64() {
        uint64_t v = 0;
        for (int i = 0; i < 8; ++i) v = (v << 8) | byte();
        return v;
    }
    // A dim: mostly small, sometimes huge (powers of two up to 2^62), sometimes
    // 0 or negative, so overflow and empty tensors are reached quickly.
    int64_t dim() {
        const uint8_t kind = byte();
        if (kind < 160) return kind % 17;
        if (kind < 220) return int64_t{1} << (byte() % 63);
        if (kind < 240) return static_cast<int64_t>(u64() >> 1);
        return -static_cast<int64_t>(byte() % 3) - 1;
    }
    std::string text(size_t max_len) {
        std::string s;
        const size_t n = pick(max_len + 1);
        for (size_t i = 0; i < n; ++i) s += static_cast<char>(byte());
        return s;
    }
    bool empty() const { return pos_ >= size_; }

private:
    const uint8_t* data_;
    size_t size_;
    size_t pos_ = 0;
};

}   // namespace dynrt::fuzz
