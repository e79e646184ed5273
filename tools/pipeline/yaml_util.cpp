// Location-aware reads of YAML nodes (see yaml_util.hpp).
#include "yaml_util.hpp"

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <set>

namespace dynrt::pipeline::detail {

std::string Source::resolve(const std::string& path) const {
    const std::filesystem::path p(path);
    if (p.is_absolute() || base_dir.empty()) return p.lexically_normal().string();
    return (std::filesystem::path(base_dir) / p).lexically_normal().string();
}

const char* kind_name(const YAML::Node& n) {
    if (!n.IsDefined() || n.IsNull()) return "nothing";
    if (n.IsMap()) return "a map";
    if (n.IsSequence()) return "a list";
    return "a scalar";
}

void check_keys(const Source& src, const YAML::Node& map, const std::vector<std::string>& allowed,
                const std::string& what) {
    std::set<std::string> seen;
    for (const auto& kv : map) {
        if (!kv.first.IsScalar()) src.fail(kv.first, what + ": keys must be plain names");
        const std::string key = kv.first.Scalar();
        if (!seen.insert(key).second) src.fail(kv.first, what + ": duplicate key '" + key + "'", key);
        bool ok = false;
        for (const auto& a : allowed) ok = ok || a == key;
        if (ok) continue;
        std::string msg = what + ": unknown key '" + key + "'";
        const auto close = close_names(key, allowed, 1);
        if (!close.empty()) msg += " (did you mean '" + close[0] + "'?)";
        msg += "; allowed:";
        for (size_t i = 0; i < allowed.size(); ++i) msg += (i ? ", " : " ") + allowed[i];
        src.fail(kv.first, msg, key);
    }
}

void expect_map(const Source& src, const YAML::Node& n, const std::string& what) {
    if (!n.IsMap()) src.fail(n, what + " must be a map, got " + kind_name(n));
}

void expect_seq(const Source& src, const YAML::Node& n, const std::string& what) {
    if (!n.IsSequence()) src.fail(n, what + " must be a list, got " + kind_name(n));
}

std::string read_string(const Source& src, const YAML::Node& n, const std::string& what) {
    if (!n.IsScalar()) src.fail(n, what + " must be a string, got " + kind_name(n));
    return n.Scalar();
}

// Numbers and booleans must be plain scalars: a quoted "5" is a string.
static bool plain(const YAML::Node& n) { return n.IsScalar() && n.Tag() != "!"; }

// `n` as a T when it is a plain scalar that converts.
template <class T>
static bool try_as(const YAML::Node& n, T& out) {
    if (!plain(n)) return false;
    try {
        out = n.as<T>();
        return true;
    } catch (const YAML::Exception&) {
        return false;
    }
}

bool try_int(const YAML::Node& n, int64_t& out) { return try_as(n, out); }

bool try_float(const YAML::Node& n, double& out) { return try_as(n, out); }

bool try_bool(const YAML::Node& n, bool& out) { return try_as(n, out); }

static std::string shown(const YAML::Node& n) {
    if (n.IsScalar()) return "'" + n.Scalar() + "'";
    return kind_name(n);
}

int64_t read_int(const Source& src, const YAML::Node& n, const std::string& what) {
    int64_t v = 0;
    if (!try_int(n, v)) src.fail(n, what + " must be an integer, got " + shown(n));
    return v;
}

double read_float(const Source& src, const YAML::Node& n, const std::string& what) {
    double v = 0;
    if (!try_float(n, v)) src.fail(n, what + " must be a number, got " + shown(n));
    return v;
}

bool read_bool(const Source& src, const YAML::Node& n, const std::string& what) {
    bool v = false;
    if (!try_bool(n, v)) src.fail(n, what + " must be true or false, got " + shown(n));
    return v;
}

// Reproducible uniform numbers in [0, 1) from a 64-bit seed (splitmix64): the
// same on every platform, unlike std:: distributions.
namespace {
struct SplitMix {
    uint64_t state;
    uint64_t next() {
        uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
        z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
        z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
        return z ^ (z >> 31);
    }
    double uniform() { return static_cast<double>(next() >> 11) * (1.0 / 9007199254740992.0); }
};
}   // namespace

void fill_random(HostTensor& t, uint64_t seed, double low, double high) {
    SplitMix rng{seed};
    const size_t n = t.count();
    const DataType type = t.dtype();
    if (type == DataType::f32) {   // the common case, without a per-element dtype switch
        float* p = t.as<float>();
        for (size_t i = 0; i < n; ++i) p[i] = static_cast<float>(low + rng.uniform() * (high - low));
        return;
    }
    const bool boolean = type == DataType::boolean, floating = is_floating(type);
    for (size_t i = 0; i < n; ++i) {
        const double u = rng.uniform();
        if (boolean) t.set_from_double(i, u < 0.5 ? 0.0 : 1.0);
        else if (floating) t.set_from_double(i, low + u * (high - low));
        else t.set_from_double(i, std::floor(low + u * (high - low)));
    }
}

}   // namespace dynrt::pipeline::detail

namespace dynrt::pipeline {

static size_t edit_distance(const std::string& a, const std::string& b) {
    std::vector<size_t> prev(b.size() + 1), cur(b.size() + 1);
    for (size_t j = 0; j <= b.size(); ++j) prev[j] = j;
    for (size_t i = 1; i <= a.size(); ++i) {
        cur[0] = i;
        for (size_t j = 1; j <= b.size(); ++j) {
            const size_t sub = prev[j - 1] + (a[i - 1] == b[j - 1] ? 0 : 1);
            cur[j] = std::min({prev[j] + 1, cur[j - 1] + 1, sub});
        }
        std::swap(prev, cur);
    }
    return prev[b.size()];
}

std::vector<std::string> close_names(const std::string& name, const std::vector<std::string>& candidates,
                                     size_t max_count) {
    // Close = within a third of the name's length (at least 2 edits), or one
    // name containing the other ("conv" -> "convolution").
    std::vector<std::pair<size_t, std::string>> scored;
    const size_t limit = std::max<size_t>(2, name.size() / 3);
    for (const auto& c : candidates) {
        size_t d = edit_distance(name, c);
        const bool contains =
            name.size() >= 3 && (c.find(name) != std::string::npos || name.find(c) != std::string::npos);
        if (d <= limit || contains) scored.emplace_back(contains ? std::min(d, limit) : d, c);
    }
    std::stable_sort(scored.begin(), scored.end(), [](const auto& x, const auto& y) { return x.first < y.first; });
    std::vector<std::string> out;
    for (const auto& s : scored) {
        if (out.size() >= max_count) break;
        out.push_back(s.second);
    }
    return out;
}

}   // namespace dynrt::pipeline
