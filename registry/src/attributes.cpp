#include "dynrt/attributes.hpp"

#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <type_traits>

#include "dynrt/error.hpp"

namespace dynrt {

namespace {

// The variant's alternatives are declared in AttrType order.
AttrType type_of(const AttrValue& v) { return static_cast<AttrType>(v.index()); }

std::string join(const std::vector<std::string>& v) {
    std::string s;
    for (size_t i = 0; i < v.size(); ++i) s += (i ? ", " : "") + v[i];
    return s;
}

// Shortest text that reads back as the same double.
std::string double_to_string(double d) {
    if (std::isnan(d)) return "nan";
    if (std::isinf(d)) return d < 0 ? "-inf" : "inf";
    // "%.*g" is what a stream with that precision writes, without a stream
    // (impl-cache keys format every attribute of every node).
    char buf[40];
    for (int prec = 6; prec <= 17; ++prec) {
        std::snprintf(buf, sizeof buf, "%.*g", prec, d);
        if (std::strtod(buf, nullptr) == d) break;
    }
    return buf;
}

Error attr_error(const std::string& name, const std::string& message) {
    ErrorContext ctx;
    ctx.field = name;
    return Error(message, ctx);
}

// Converts `v` to `want` where the conversion loses nothing; throws otherwise.
AttrValue convert(const AttrSpec& spec, const AttrValue& v) {
    const AttrType have = type_of(v);
    if (have == spec.type) return v;
    switch (spec.type) {
        case AttrType::Float:
            if (have == AttrType::Int) return static_cast<double>(std::get<int64_t>(v));
            break;
        case AttrType::Ints:
            if (have == AttrType::Int) return std::vector<int64_t>{std::get<int64_t>(v)};
            break;
        case AttrType::Floats:
            if (have == AttrType::Float) return std::vector<double>{std::get<double>(v)};
            if (have == AttrType::Int) return std::vector<double>{static_cast<double>(std::get<int64_t>(v))};
            if (have == AttrType::Ints) {
                const auto& ints = std::get<std::vector<int64_t>>(v);
                return std::vector<double>(ints.begin(), ints.end());
            }
            break;
        case AttrType::Strings:
            if (have == AttrType::String) return std::vector<std::string>{std::get<std::string>(v)};
            break;
        default: break;
    }
    throw attr_error(spec.name, std::string("expected ") + to_string(spec.type) + ", got " + to_string(have));
}

void check_allowed(const AttrSpec& spec, const AttrValue& v) {
    if (spec.allowed.empty()) return;
    auto check = [&](const std::string& s) {
        for (const auto& a : spec.allowed)
            if (a == s) return;
        throw attr_error(spec.name, "value '" + s + "' is not allowed; allowed: " + join(spec.allowed));
    };
    if (const auto* s = std::get_if<std::string>(&v)) check(*s);
    if (const auto* list = std::get_if<std::vector<std::string>>(&v))
        for (const auto& s : *list) check(s);
}

// FNV-1a: std::hash is not guaranteed stable across builds, and attribute
// hashes feed cache keys that may outlive one process.
struct Fnv {
    uint64_t h = 1469598103934665603ULL;
    void bytes(const void* p, size_t n) {
        const auto* b = static_cast<const unsigned char*>(p);
        for (size_t i = 0; i < n; ++i) {
            h ^= b[i];
            h *= 1099511628211ULL;
        }
    }
    void u64(uint64_t v) { bytes(&v, sizeof v); }
    void str(const std::string& s) {
        u64(s.size());
        bytes(s.data(), s.size());
    }
    void dbl(double d) {
        if (d == 0.0) d = 0.0;   // -0.0 and 0.0 compare equal, so hash equal
        uint64_t u;
        std::memcpy(&u, &d, sizeof u);
        u64(u);
    }
};

struct Printer {
    std::string operator()(int64_t i) const { return std::to_string(i); }
    std::string operator()(double d) const { return double_to_string(d); }
    std::string operator()(bool b) const { return b ? "true" : "false"; }
    std::string operator()(const std::string& s) const { return s; }
    std::string operator()(const std::vector<int64_t>& l) const { return list(l); }
    std::string operator()(const std::vector<double>& l) const { return list(l); }
    std::string operator()(const std::vector<std::string>& l) const { return list(l); }
    template <typename T>
    std::string list(const std::vector<T>& l) const {
        std::string s = "[";
        for (size_t i = 0; i < l.size(); ++i) s += (i ? ", " : "") + (*this)(l[i]);
        return s + "]";
    }
};

}   // namespace

const char* to_string(AttrType t) {
    switch (t) {
        case AttrType::Int: return "int";
        case AttrType::Float: return "float";
        case AttrType::Bool: return "bool";
        case AttrType::String: return "string";
        case AttrType::Ints: return "ints";
        case AttrType::Floats: return "floats";
        case AttrType::Strings: return "strings";
    }
    return "?";
}

std::string attr_value_to_string(const AttrValue& v) { return std::visit(Printer{}, v); }

AttrSpec attr_int(std::string name, std::optional<int64_t> def, std::string doc) {
    AttrSpec s{std::move(name), AttrType::Int, std::nullopt, {}, std::move(doc)};
    if (def) s.default_value = *def;
    return s;
}

AttrSpec attr_float(std::string name, std::optional<double> def, std::string doc) {
    AttrSpec s{std::move(name), AttrType::Float, std::nullopt, {}, std::move(doc)};
    if (def) s.default_value = *def;
    return s;
}

AttrSpec attr_bool(std::string name, std::optional<bool> def, std::string doc) {
    AttrSpec s{std::move(name), AttrType::Bool, std::nullopt, {}, std::move(doc)};
    if (def) s.default_value = *def;
    return s;
}

AttrSpec attr_string(std::string name, std::optional<std::string> def, std::vector<std::string> allowed,
                     std::string doc) {
    AttrSpec s{std::move(name), AttrType::String, std::nullopt, std::move(allowed), std::move(doc)};
    if (def) s.default_value = *def;
    return s;
}

AttrSpec attr_ints(std::string name, std::optional<std::vector<int64_t>> def, std::string doc) {
    AttrSpec s{std::move(name), AttrType::Ints, std::nullopt, {}, std::move(doc)};
    if (def) s.default_value = *def;
    return s;
}

AttrSpec attr_floats(std::string name, std::optional<std::vector<double>> def, std::string doc) {
    AttrSpec s{std::move(name), AttrType::Floats, std::nullopt, {}, std::move(doc)};
    if (def) s.default_value = *def;
    return s;
}

const AttrValue& Attributes::get(const std::string& name) const {
    auto it = values_.find(name);
    if (it == values_.end()) throw attr_error(name, "attribute '" + name + "' is not set");
    return it->second;
}

namespace {
template <typename T>
const T& typed(const std::string& name, const AttrValue& v, AttrType want) {
    if (const T* p = std::get_if<T>(&v)) return *p;
    throw attr_error(name,
                     std::string("attribute '") + name + "' is " + to_string(type_of(v)) + ", not " + to_string(want));
}
}   // namespace

int64_t Attributes::get_int(const std::string& name) const { return typed<int64_t>(name, get(name), AttrType::Int); }

double Attributes::get_float(const std::string& name) const {
    const AttrValue& v = get(name);
    if (const auto* i = std::get_if<int64_t>(&v)) return static_cast<double>(*i);
    return typed<double>(name, v, AttrType::Float);
}

bool Attributes::get_bool(const std::string& name) const { return typed<bool>(name, get(name), AttrType::Bool); }

const std::string& Attributes::get_string(const std::string& name) const {
    return typed<std::string>(name, get(name), AttrType::String);
}

const std::vector<int64_t>& Attributes::get_ints(const std::string& name) const {
    return typed<std::vector<int64_t>>(name, get(name), AttrType::Ints);
}

std::vector<double> Attributes::get_floats(const std::string& name) const {
    const AttrValue& v = get(name);
    if (const auto* ints = std::get_if<std::vector<int64_t>>(&v)) return {ints->begin(), ints->end()};
    return typed<std::vector<double>>(name, v, AttrType::Floats);
}

Attributes Attributes::validate(const std::vector<AttrSpec>& schema, const Attributes& raw) {
    for (const auto& [name, value] : raw.values_) {
        (void)value;
        bool known = false;
        for (const auto& spec : schema) known = known || spec.name == name;
        if (!known) {
            std::vector<std::string> names;
            for (const auto& spec : schema) names.push_back(spec.name);
            throw attr_error(name, "unknown attribute '" + name +
                                       "'; known: " + (names.empty() ? std::string("(none)") : join(names)));
        }
    }
    Attributes out;
    for (const auto& spec : schema) {
        auto it = raw.values_.find(spec.name);
        if (it == raw.values_.end()) {
            if (!spec.default_value) throw attr_error(spec.name, "missing required attribute '" + spec.name + "'");
            out.values_[spec.name] = *spec.default_value;
            continue;
        }
        AttrValue v = convert(spec, it->second);
        check_allowed(spec, v);
        out.values_[spec.name] = std::move(v);
    }
    return out;
}

size_t Attributes::hash() const {
    Fnv f;
    for (const auto& [name, v] : values_) {
        f.str(name);
        f.u64(v.index());
        std::visit(
            [&](const auto& x) {
                using T = std::decay_t<decltype(x)>;
                if constexpr (std::is_same_v<T, int64_t>) f.u64(static_cast<uint64_t>(x));
                else if constexpr (std::is_same_v<T, double>) f.dbl(x);
                else if constexpr (std::is_same_v<T, bool>) f.u64(x ? 1 : 0);
                else if constexpr (std::is_same_v<T, std::string>) f.str(x);
                else {
                    f.u64(x.size());
                    for (const auto& e : x) {
                        using E = std::decay_t<decltype(e)>;
                        if constexpr (std::is_same_v<E, int64_t>) f.u64(static_cast<uint64_t>(e));
                        else if constexpr (std::is_same_v<E, double>) f.dbl(e);
                        else f.str(e);
                    }
                }
            },
            v);
    }
    return static_cast<size_t>(f.h);
}

std::string Attributes::to_string() const {
    std::string s = "{";
    bool first = true;
    for (const auto& [name, v] : values_) {
        if (!first) s += ", ";
        s += name;
        s += ": ";
        s += attr_value_to_string(v);
        first = false;
    }
    return s + "}";
}

}   // namespace dynrt
