// ImplCache: the in-memory LRU cache of built impls, shared by every infer
// request of a Network.
//
// Keys are exact strings built from the op, its attributes, the input and output
// layouts and the engine type (make_key); the map hashes them. A static impl is
// built once per key and reused whenever the same shapes come back. Thread-safe.
#pragma once

#include <cstddef>
#include <list>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>

#include "dynrt/implementation_map.hpp"

namespace dynrt {

class ImplCache {
public:
    explicit ImplCache(size_t capacity);

    static std::string make_key(const KernelParams& params);

    ImplPtr get(const std::string& key);   // marks the entry most recently used
    bool contains(const std::string& key) const;
    void put(const std::string& key, ImplPtr impl);   // evicts the least recently used
    size_t size() const;
    size_t capacity() const { return capacity_; }
    size_t evictions() const;
    void clear();

private:
    using Entry = std::pair<std::string, ImplPtr>;
    size_t capacity_;
    mutable std::mutex mutex_;
    std::list<Entry> lru_;   // front = most recent
    std::unordered_map<std::string, std::list<Entry>::iterator> index_;
    size_t evictions_ = 0;
};

}   // namespace dynrt
