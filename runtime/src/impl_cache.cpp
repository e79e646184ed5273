#include "dynrt/impl_cache.hpp"

#include "dynrt/op_registry.hpp"

namespace dynrt {

ImplCache::ImplCache(size_t capacity) : capacity_(capacity) {}

std::string ImplCache::make_key(const KernelParams& p) {
    std::string key;
    key.reserve(128);
    key += p.op ? p.op->name : std::string("?");
    key += p.attrs ? p.attrs->to_string() : std::string("{}");
    key += '|';
    for (const auto& l : p.inputs) {
        key += l.to_string();
        key += ',';
    }
    key += "->";
    for (const auto& l : p.outputs) {
        key += l.to_string();
        key += ',';
    }
    // Fused post-ops change the kernel: their ops, attributes and layouts.
    for (const auto& f : p.fused_ops) {
        key += "+";
        key += f.op ? f.op->name : std::string("?");
        key += f.attrs ? f.attrs->to_string() : std::string("{}");
        key += '#';
        key += std::to_string(f.main_input);
        key += '(';
        for (const auto& l : f.inputs) {
            key += l.to_string();
            key += ',';
        }
        key += ')';
    }
    if (p.constant_weights) key += "|constant-weights";
    key += '@';
    key += p.engine ? p.engine->info().type : std::string("?");
    return key;
}

ImplPtr ImplCache::get(const std::string& key) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = index_.find(key);
    if (it == index_.end()) return nullptr;
    lru_.splice(lru_.begin(), lru_, it->second);
    return it->second->second;
}

bool ImplCache::contains(const std::string& key) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return index_.count(key) != 0;
}

void ImplCache::put(const std::string& key, ImplPtr impl) {
    std::lock_guard<std::mutex> lock(mutex_);
    if (capacity_ == 0) return;
    auto it = index_.find(key);
    if (it != index_.end()) {
        it->second->second = std::move(impl);
        lru_.splice(lru_.begin(), lru_, it->second);
        return;
    }
    lru_.emplace_front(key, std::move(impl));
    index_[key] = lru_.begin();
    while (lru_.size() > capacity_) {
        index_.erase(lru_.back().first);
        lru_.pop_back();
        ++evictions_;
    }
}

size_t ImplCache::size() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return lru_.size();
}

size_t ImplCache::evictions() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return evictions_;
}

void ImplCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    index_.clear();
    lru_.clear();
}

}   // namespace dynrt
