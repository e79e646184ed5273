#include "dynrt/stats.hpp"

namespace dynrt {

// One list of the fields, used by both functions, so adding a counter means
// adding one line here (one field per line keeps clang-format stable).
#define DYNRT_COUNTER_FIELDS(X) \
    X(executions)               \
    X(shape_changes)            \
    X(update_shape_runs)        \
    X(skip_shape_unchanged)     \
    X(skip_shape_of)            \
    X(skip_shape_of_subgraph)   \
    X(skip_done_by_other)       \
    X(skip_data_dependent)      \
    X(skip_empty_output)        \
    X(impl_cache_hits)          \
    X(impl_cache_misses)        \
    X(static_builds)            \
    X(dynamic_impl_runs)        \
    X(async_builds_queued)      \
    X(async_builds_picked)      \
    X(impl_changes)             \
    X(allocations)              \
    X(reuses)                   \
    X(reclaims)                 \
    X(bytes_allocated)          \
    X(pool_hits)                \
    X(pool_misses)              \
    X(concat_inplace)           \
    X(concat_bytes_copied)      \
    X(state_bytes_copied)       \
    X(weights_reorders)         \
    X(weights_cache_hits)       \
    X(fused_runs)               \
    X(unfused_runs)             \
    X(fake_aligned)             \
    X(set_arguments)            \
    X(views)

// Catches a counter added to the header but not to the list above.
#define DYNRT_ONE(f) +1
static_assert(sizeof(Counters) == sizeof(uint64_t) * (0 DYNRT_COUNTER_FIELDS(DYNRT_ONE)),
              "Counters has a field missing from DYNRT_COUNTER_FIELDS");
#undef DYNRT_ONE

Counters& Counters::operator+=(const Counters& o) {
#define DYNRT_ADD(f) f += o.f;
    DYNRT_COUNTER_FIELDS(DYNRT_ADD)
#undef DYNRT_ADD
    return *this;
}

std::vector<std::pair<const char*, uint64_t>> Counters::items() const {
    std::vector<std::pair<const char*, uint64_t>> out;
#define DYNRT_ITEM(f) out.emplace_back(#f, f);
    DYNRT_COUNTER_FIELDS(DYNRT_ITEM)
#undef DYNRT_ITEM
    return out;
}

#undef DYNRT_COUNTER_FIELDS

const char* to_string(FlowStep step) {
    switch (step) {
        case FlowStep::shape: return "shape";
        case FlowStep::impl: return "impl";
        case FlowStep::memory: return "memory";
        case FlowStep::arguments: return "arguments";
        case FlowStep::execute: return "execute";
        case FlowStep::wait: return "wait";
    }
    return "?";
}

uint64_t NodeTimes::total() const {
    uint64_t t = 0;
    for (uint64_t v : ns) t += v;
    return t;
}

uint64_t NodeTimes::host() const {
    return total() - ns[static_cast<size_t>(FlowStep::execute)] - ns[static_cast<size_t>(FlowStep::wait)];
}

}   // namespace dynrt
