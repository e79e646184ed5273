// MemoryPool: the output buffers of one InferRequest.
//
// Every primitive output buffer of a request comes from its pool. A buffer is a
// *record*; whoever acquires it becomes one of its holders (a node, identified by
// its index) for as long as any view of the buffer it got is alive, so a buffer
// still read by someone else (a variable, a consumer's view) is never handed to
// another holder by mistake. acquire() looks at the records in size order, from
// the size class of the request upwards, and takes the first one that
//   - is free (no holder), or is held only by nodes whose lifetime in the
//     execution order does not overlap the requester's (outputs of primitives
//     that are never live at the same time share one buffer), and
//   - for a dynamic node, is less than twice the request (the 50 % rule: a small
//     tensor does not pin a big buffer);
// only then does it ask the device. Records nobody held for a whole run go back
// to the device at end_run(), so a growing tensor does not leave a trail of old
// buffers. Bytes held, the peak and hits/misses are tracked here; a request over
// the budget throws dynrt::Error before anything is allocated.
//
// Sizes are rounded up to size classes (256 bytes, then 8 classes per power of
// two: at most 12.5 % slack). One pool per request: requests on several threads
// never share one. Not thread-safe by itself (a request runs on one thread).
#pragma once

#include <cstddef>
#include <cstdint>
#include <limits>
#include <memory>
#include <vector>

#include "dynrt/memory.hpp"

namespace dynrt {

class MemoryPool {
public:
    struct Options {
        bool reuse = true;         // false: every acquire allocates, every release frees
        size_t budget_bytes = 0;   // 0 = no budget
    };
    // Execution positions [first, last] in which a holder's output is live.
    struct Lifetime {
        size_t first = 0;
        size_t last = std::numeric_limits<size_t>::max();
        bool pinned = true;   // shares with nobody (outputs, state, shape_of subgraphs ...)
    };

    MemoryPool(EnginePtr engine, Options options);
    ~MemoryPool();
    MemoryPool(const MemoryPool&) = delete;
    MemoryPool& operator=(const MemoryPool&) = delete;

    // One lifetime per holder index (unknown holders are pinned).
    void set_lifetimes(std::vector<Lifetime> lifetimes);

    struct Grant {
        std::shared_ptr<Buffer> buffer;   // at least `bytes` long; releasing every copy releases the hold
        bool hit = false;                 // served by an existing record
    };
    // Throws dynrt::Error (naming the request, the bytes held and the budget) when
    // a device allocation would exceed the budget; nothing is allocated then.
    Grant acquire(size_t bytes, size_t holder, bool dynamic);

    // Frees the records that stayed free for the whole run that just ended.
    void end_run();
    // Frees every free record now.
    void trim();

    static size_t size_class(size_t bytes);

    size_t used_bytes() const;   // device bytes held by the pool (held and free records)
    size_t peak_bytes() const;
    void reset_peak();
    size_t free_bytes() const;
    size_t records() const;
    uint64_t hits() const;
    uint64_t misses() const;
    const Options& options() const;

    struct State;   // implementation; shared with every lease handed out

private:
    std::shared_ptr<State> state_;
};

}   // namespace dynrt
