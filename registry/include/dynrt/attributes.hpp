// Typed op attributes: schemas declared by ops, values parsed once per node.
//
// An op declares AttrSpecs (name, type, default or required, allowed strings).
// Front ends (YAML, the op harness) turn raw values into an Attributes map with
// Attributes::validate(), which fills defaults and rejects unknown, missing or
// ill-typed attributes with an error naming the attribute. Impls read values
// through the typed getters.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <variant>
#include <vector>

namespace dynrt {

enum class AttrType { Int, Float, Bool, String, Ints, Floats, Strings };
const char* to_string(AttrType t);

using AttrValue = std::variant<int64_t, double, bool, std::string, std::vector<int64_t>, std::vector<double>,
                               std::vector<std::string>>;
std::string attr_value_to_string(const AttrValue& v);

struct AttrSpec {
    std::string name;
    AttrType type = AttrType::Int;
    std::optional<AttrValue> default_value;   // none = required
    std::vector<std::string> allowed;         // String only: allowed values (empty = any)
    std::string doc;
};

// Convenience constructors for schemas.
AttrSpec attr_int(std::string name, std::optional<int64_t> def, std::string doc = {});
AttrSpec attr_float(std::string name, std::optional<double> def, std::string doc = {});
AttrSpec attr_bool(std::string name, std::optional<bool> def, std::string doc = {});
AttrSpec attr_string(std::string name, std::optional<std::string> def, std::vector<std::string> allowed = {},
                     std::string doc = {});
AttrSpec attr_ints(std::string name, std::optional<std::vector<int64_t>> def, std::string doc = {});
AttrSpec attr_floats(std::string name, std::optional<std::vector<double>> def, std::string doc = {});

class Attributes {
public:
    void set(const std::string& name, AttrValue v) { values_[name] = std::move(v); }
    bool has(const std::string& name) const { return values_.count(name) != 0; }
    const std::map<std::string, AttrValue>& values() const { return values_; }

    int64_t get_int(const std::string& name) const;
    double get_float(const std::string& name) const;   // Int values widen
    bool get_bool(const std::string& name) const;
    const std::string& get_string(const std::string& name) const;
    const std::vector<int64_t>& get_ints(const std::string& name) const;
    std::vector<double> get_floats(const std::string& name) const;   // Ints widen

    // Checks `raw` against `schema`: converts compatible values (an Int given for a
    // Float, a scalar for a one-element list), fills defaults, and throws
    // dynrt::Error (field = attribute name) for unknown, missing, ill-typed or
    // disallowed values. The caller adds node/file context.
    static Attributes validate(const std::vector<AttrSpec>& schema, const Attributes& raw);

    size_t hash() const;
    std::string to_string() const;   // "{axis: 1, exclusive: false}"

private:
    const AttrValue& get(const std::string& name) const;
    std::map<std::string, AttrValue> values_;
};

}   // namespace dynrt
