// The per-request memory pool (see memory_pool.hpp for the rules).
#include "dynrt/memory_pool.hpp"

#include <algorithm>
#include <map>
#include <string>
#include <unordered_map>

#include "dynrt/error.hpp"

namespace dynrt {

namespace {

// One live lease of a record: its holder and the holder's lifetime when it
// took the buffer.
struct Held {
    size_t holder = 0;
    size_t last = 0;
    bool pinned = false;
};

// The holders of a buffer are kept by the start of their lifetimes. Holders
// sharing a buffer have pairwise disjoint lifetimes, so ordered by start they
// are ordered by end too, and whether a new lifetime fits is one lookup
// (a graph of 200k nodes whose buffers all rotate through a few records
// made a scan of every holder quadratic).
struct Record {
    std::shared_ptr<Buffer> buffer;
    size_t size = 0;
    std::multimap<size_t, Held> held;   // by lifetime start; one entry per live lease
    struct Leases {
        size_t count = 0;
        size_t first = 0;   // the key of its entries in `held`
    };
    std::unordered_map<size_t, Leases> leases;   // holder -> its live leases of this record
    size_t pinned = 0;                           // live leases of pinned holders
    uint64_t freed_in_run = 0;                   // run in which the last holder left
    size_t last_holder = 0;                      // who left it free
    bool free() const { return held.empty(); }
};

}   // namespace

// Shared with every lease, so that a view outliving the request still returns
// its buffer to a live object.
struct MemoryPool::State {
    EnginePtr engine;
    Options options;
    std::vector<Lifetime> lifetimes;
    std::multimap<size_t, std::unique_ptr<Record>> records;   // by size
    size_t used = 0, peak = 0;
    uint64_t hits = 0, misses = 0;
    uint64_t run = 0;

    const Lifetime& lifetime(size_t holder) const {
        static const Lifetime kPinned;
        return holder < lifetimes.size() ? lifetimes[holder] : kPinned;
    }
    // Two holders may share a buffer when they are not the same, neither is
    // pinned and their live ranges in the execution order do not overlap.
    bool can_share(const Record& r, size_t holder) const {
        const Lifetime& y = lifetime(holder);
        if (y.pinned || r.pinned || r.leases.count(holder)) return false;
        // The holders starting after y ends cannot overlap it; of those
        // starting before, the latest ends last.
        auto after = r.held.upper_bound(y.last);
        if (after == r.held.begin()) return true;
        return std::prev(after)->second.last < y.first;
    }

    void hold(Record& r, size_t holder) {
        const Lifetime& l = lifetime(holder);
        r.held.emplace(l.first, Held{holder, l.last, l.pinned});
        Record::Leases& n = r.leases[holder];
        ++n.count;
        n.first = l.first;
        if (l.pinned) ++r.pinned;
    }

    void erase(Record* rec) {
        for (auto it = records.begin(); it != records.end(); ++it) {
            if (it->second.get() == rec) {
                used -= rec->size;
                records.erase(it);
                return;
            }
        }
    }

    void release(Record* rec, size_t holder) {
        auto lease = rec->leases.find(holder);
        if (lease == rec->leases.end()) return;
        const auto [from, to] = rec->held.equal_range(lease->second.first);
        for (auto it = from; it != to; ++it) {
            if (it->second.holder != holder) continue;
            if (it->second.pinned) --rec->pinned;
            rec->held.erase(it);
            break;
        }
        if (--lease->second.count == 0) rec->leases.erase(lease);
        if (!rec->free()) return;
        if (!options.reuse) {
            erase(rec);   // the buffer goes back to the device now
            return;
        }
        rec->freed_in_run = run;
        rec->last_holder = holder;
    }

    // Frees free records matching `pred`.
    template <typename Pred>
    void free_if(Pred pred) {
        for (auto it = records.begin(); it != records.end();) {
            if (it->second->free() && pred(*it->second)) {
                used -= it->second->size;
                it = records.erase(it);
            } else {
                ++it;
            }
        }
    }
};

namespace {

// Keeps a record held by one holder while any copy of the buffer pointer lives.
struct Lease {
    Lease(std::shared_ptr<MemoryPool::State> s, Record* r, size_t h) : state(std::move(s)), record(r), holder(h) {}
    ~Lease() { state->release(record, holder); }
    Lease(const Lease&) = delete;
    Lease& operator=(const Lease&) = delete;
    std::shared_ptr<MemoryPool::State> state;
    Record* record;
    size_t holder;
};

}   // namespace

MemoryPool::MemoryPool(EnginePtr engine, Options options) : state_(std::make_shared<State>()) {
    if (!engine) throw Error("MemoryPool needs an engine");
    state_->engine = std::move(engine);
    state_->options = options;
}

MemoryPool::~MemoryPool() = default;

void MemoryPool::set_lifetimes(std::vector<Lifetime> lifetimes) { state_->lifetimes = std::move(lifetimes); }

size_t MemoryPool::size_class(size_t bytes) {
    if (bytes <= 256) return 256;
    // 8 classes per power of two: round up to a multiple of 2^(floor(log2)-3).
    size_t top = 1;
    while ((top << 1) <= bytes) top <<= 1;
    const size_t step = top >> 3;
    return (bytes + step - 1) / step * step;
}

MemoryPool::Grant MemoryPool::acquire(size_t bytes, size_t holder, bool dynamic) {
    State& s = *state_;
    const size_t cls = size_class(bytes);
    Record* chosen = nullptr;
    if (s.options.reuse) {
        for (auto it = s.records.lower_bound(cls); it != s.records.end(); ++it) {
            Record& r = *it->second;
            // 50 % rule for dynamic outputs; sizes are ordered, so stop at the first too big.
            if (dynamic && cls * 2 <= r.size) break;
            if (r.free() || s.can_share(r, holder)) {
                chosen = &r;
                break;
            }
        }
    }
    Grant g;
    if (chosen) {
        ++s.hits;
        g.hit = true;
    } else {
        // A node that outgrew its buffer: its old, smaller free buffers cannot
        // serve it and would only raise the peak while the new one is taken.
        s.free_if([&](const Record& r) { return r.last_holder == holder && r.size < cls; });
        const size_t size = s.options.reuse ? cls : std::max<size_t>(bytes, 1);
        if (s.options.budget_bytes && s.used + size > s.options.budget_bytes) {
            trim();   // free buffers first: they may make room
            if (s.used + size > s.options.budget_bytes)
                throw Error("memory budget exceeded: an output of " + std::to_string(bytes) + " bytes (" +
                            std::to_string(size) + " with its size class) does not fit; the request holds " +
                            std::to_string(s.used) + " bytes of a budget of " + std::to_string(s.options.budget_bytes) +
                            " bytes (NetworkOptions::memory_budget_bytes)");
        }
        auto rec = std::make_unique<Record>();
        rec->buffer = s.engine->allocate(size);   // throws dynrt::Error on device refusal
        rec->size = rec->buffer->size();
        chosen = rec.get();
        s.records.emplace(rec->size, std::move(rec));
        s.used += chosen->size;
        s.peak = std::max(s.peak, s.used);
        ++s.misses;
    }
    s.hold(*chosen, holder);
    auto lease = std::make_shared<Lease>(state_, chosen, holder);
    g.buffer = std::shared_ptr<Buffer>(lease, chosen->buffer.get());
    return g;
}

void MemoryPool::end_run() {
    State& s = *state_;
    const uint64_t run = s.run;
    s.free_if([run](const Record& r) { return r.freed_in_run < run; });
    ++s.run;
}

void MemoryPool::trim() {
    state_->free_if([](const Record&) { return true; });
}

size_t MemoryPool::used_bytes() const { return state_->used; }
size_t MemoryPool::peak_bytes() const { return state_->peak; }
void MemoryPool::reset_peak() { state_->peak = state_->used; }
size_t MemoryPool::free_bytes() const {
    size_t n = 0;
    for (const auto& kv : state_->records)
        if (kv.second->free()) n += kv.second->size;
    return n;
}
size_t MemoryPool::records() const { return state_->records.size(); }
uint64_t MemoryPool::hits() const { return state_->hits; }
uint64_t MemoryPool::misses() const { return state_->misses; }
const MemoryPool::Options& MemoryPool::options() const { return state_->options; }

}   // namespace dynrt
