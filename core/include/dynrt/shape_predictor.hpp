// ShapePredictor: predicts how large a dynamic buffer will need to be soon, so
// that a growing tensor is reallocated rarely.
//
// One predictor per infer request; keys are primitive ids (and input/output
// port names). Each call records the current shape (history of 3 per key). Two
// modes: *iterations* (the last two steps equal, non-zero, each dim step <=
// max_per_dim_diff and the one-step slice <= max_per_iter_size bytes: predict
// current + N * step) and *ratio* (flattened element count * ratio in dim 0, when
// ratio > 1). Exact rules: docs/shape-predictor.md. A rank change restarts the
// key's history. Called from realloc_if_needed only when a buffer is reconsidered.
#pragma once

#include <cstddef>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "dynrt/layout.hpp"
#include "dynrt/shape.hpp"

namespace dynrt {

class ShapePredictor {
public:
    struct Settings {
        size_t next_iters_preallocation_count = 10;
        size_t max_per_iter_size = 16384;   // bytes
        size_t max_per_dim_diff = 2;
        float buffers_preallocation_ratio = 1.1f;
    };
    // Device limits for can_preallocate; 0 = unknown (not applied).
    struct DeviceLimits {
        size_t max_alloc_bytes = 0;
        size_t global_mem_bytes = 0;
        std::function<size_t()> used_bytes;   // bytes in use on the device
    };

    static constexpr size_t kHistorySize = 3;

    explicit ShapePredictor(Settings settings);
    ShapePredictor(Settings settings, DeviceLimits limits);

    // Parses "N BYTES DIFF RATIO" (e.g. "10 16384 2 1.1"; "0 0 0 1.0" disables).
    // Throws dynrt::Error on malformed text.
    static Settings parse_settings(const std::string& text);
    // True when the settings can never predict anything.
    static bool disabled(const Settings& s);

    // Records `current_shape` under `id`, then: (false, {}) if can_reuse_buffer,
    // or fewer than 3 shapes are known; (true, current + N*step) in iterations
    // mode; (true, {count*ratio, 1, ...}) in ratio mode; else (false, {}).
    std::pair<bool, Shape> predict_preallocation_shape(const std::string& id, const Shape& current_shape,
                                                       size_t dt_bitwidth, bool can_reuse_buffer,
                                                       Format format = Format::plain);

    // False when `desired_buffer_size` (bytes) exceeds the largest single
    // allocation, or when used + desired >= 90% of device memory. Limits not given
    // are not applied.
    bool can_preallocate(size_t desired_buffer_size) const;

    void reset();   // forgets every key's history
    const Settings& settings() const { return settings_; }

private:
    Settings settings_;
    DeviceLimits limits_;
    std::mutex mutex_;
    std::unordered_map<std::string, std::deque<Shape>> history_;
};

}   // namespace dynrt
