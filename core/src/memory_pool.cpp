// The per-request memory pool (see memory_pool.hpp for the rules).
#include "dynrt/memory_pool.hpp"

#include <algorithm>
#include <map>
#include <string>

#include "dynrt/error.hpp"

namespace dynrt {

namespace {

struct Record {
    std::shared_ptr<Buffer> buffer;
    size_t size = 0;
    std::vector<size_t> holders;   // one entry per live lease (a holder may appear twice)
    uint64_t freed_in_run = 0;     // run in which the last holder left
    size_t last_holder = 0;        // who left it free
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
    // Two holders may share a buffer when neither is pinned and their live
    // ranges in the execution order do not overlap.
    bool compatible(size_t a, size_t b) const {
        if (a == b) return false;
        const Lifetime& x = lifetime(a);
        const Lifetime& y = lifetime(b);
        if (x.pinned || y.pinned) return false;
        return x.last < y.first || y.last < x.first;
    }
    bool can_share(const Record& r, size_t holder) const {
        for (size_t h : r.holders)
            if (!compatible(h, holder)) return false;
        return true;
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
        auto it = std::find(rec->holders.begin(), rec->holders.end(), holder);
        if (it != rec->holders.end()) rec->holders.erase(it);
        if (!rec->holders.empty()) return;
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
            if (it->second->holders.empty() && pred(*it->second)) {
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
            if (r.holders.empty() || s.can_share(r, holder)) {
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
    chosen->holders.push_back(holder);
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
        if (kv.second->holders.empty()) n += kv.second->size;
    return n;
}
size_t MemoryPool::records() const { return state_->records.size(); }
uint64_t MemoryPool::hits() const { return state_->hits; }
uint64_t MemoryPool::misses() const { return state_->misses; }
const MemoryPool::Options& MemoryPool::options() const { return state_->options; }

}   // namespace dynrt
