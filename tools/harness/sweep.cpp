// Sweep text: case templates, their expansion into concrete cases, sweep files
// and `k=v` attribute strings (grammar in docs/test-op.md).
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <random>
#include <set>
#include <sstream>

#include "dynrt/error.hpp"
#include "file_io.hpp"
#include "harness.hpp"
#include "int_range.hpp"

namespace dynrt::harness {

namespace {

ErrorContext shapes_ctx(const std::string& file = {}, int line = 0) {
    ErrorContext c;
    c.field = "shapes";
    c.file = file;
    c.line = line;
    return c;
}

[[noreturn]] void fail(const std::string& what, const std::string& text) {
    throw Error(what + " in \"" + text + "\"", shapes_ctx());
}

std::string trim(const std::string& s) {
    size_t b = 0, e = s.size();
    while (b < e && std::isspace(static_cast<unsigned char>(s[b]))) ++b;
    while (e > b && std::isspace(static_cast<unsigned char>(s[e - 1]))) --e;
    return s.substr(b, e - b);
}

bool is_identifier(const std::string& s) {
    if (s.empty() || !(std::isalpha(static_cast<unsigned char>(s[0])) || s[0] == '_')) return false;
    for (char c : s)
        if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return false;
    return true;
}

bool parse_double(const std::string& s, double& out) {
    if (s.empty()) return false;
    char* end = nullptr;
    out = std::strtod(s.c_str(), &end);
    return end && *end == '\0';
}

// Splits at depth 0 (brackets/braces/parentheses balanced). `items`: at
// whitespace, dropping empty pieces and whitespace inside brackets, and failing
// on unbalanced brackets; else at `sep`, keeping every piece.
std::vector<std::string> split_depth0(const std::string& s, char sep, bool items) {
    std::vector<std::string> out;
    int depth = 0;
    std::string cur;
    for (char c : s) {
        if (c == '[' || c == '{' || c == '(') ++depth;
        if (c == ']' || c == '}' || c == ')') --depth;
        const bool space = std::isspace(static_cast<unsigned char>(c)) != 0;
        if (depth == 0 && (items ? space : c == sep)) {
            if (!items || !cur.empty()) out.push_back(cur);
            cur.clear();
        } else if (!(items && depth > 0 && space)) {
            cur += c;
        }
    }
    if (items && depth != 0) fail("unbalanced brackets", s);
    if (!items || !cur.empty()) out.push_back(cur);
    return out;
}

// Splits at `sep` where brackets/braces/parentheses are balanced.
std::vector<std::string> split_top(const std::string& s, char sep) { return split_depth0(s, sep, false); }

// Items of a case: whitespace-separated at depth 0.
std::vector<std::string> split_items(const std::string& s) { return split_depth0(s, ' ', true); }

// A set of integers: `1,3,13`, `1..64`, `1..64:8`, mixed with ',' or '|'.
std::vector<int64_t> parse_value_set(const std::string& text, const std::string& whole) {
    std::vector<int64_t> out;
    std::string norm = text;
    std::replace(norm.begin(), norm.end(), '|', ',');
    for (const std::string& raw : split_top(norm, ',')) {
        const std::string part = trim(raw);
        if (part.empty()) fail("empty value", whole);
        std::vector<int64_t> values;
        try {
            values = tools::parse_int_range(part);
        } catch (const Error& e) {
            fail(e.message(), whole);
        }
        out.insert(out.end(), values.begin(), values.end());
    }
    return out;
}

DimTerm term_of(const std::string& tok, const std::string& whole) {
    DimTerm t;
    std::string s = trim(tok);
    int64_t v = 0;
    if (tools::parse_int64(s, v)) {
        t.value = v;
        return t;
    }
    if (!s.empty() && s[0] == '-') {
        t.negate = true;
        s = s.substr(1);
    }
    if (!is_identifier(s)) fail("'" + tok + "' is neither an integer nor a symbol", whole);
    t.is_symbol = true;
    t.symbol = s;
    return t;
}

std::optional<DataType> dtype_prefix(const std::string& s) {
    if (s.empty()) return std::nullopt;
    return parse_data_type(s);
}

void note_symbol(CaseTemplate& t, const std::string& name) {
    if (std::find(t.symbol_order.begin(), t.symbol_order.end(), name) == t.symbol_order.end())
        t.symbol_order.push_back(name);
}

void parse_tensor(CaseTemplate& t, InputTemplate& in, const std::string& rhs, const std::string& whole) {
    const size_t brace = rhs.find('{');
    if (brace != std::string::npos && (rhs[0] == '{' || rhs.find('[') == std::string::npos)) {
        // Value input: [dtype]{e0,e1,...}
        in.is_values = true;
        try {
            in.dtype = dtype_prefix(rhs.substr(0, brace));
        } catch (const Error&) {
            fail("unknown dtype '" + rhs.substr(0, brace) + "'", whole);
        }
        const size_t close = rhs.find('}', brace);
        if (close == std::string::npos || close + 1 != rhs.size()) fail("'" + rhs + "' must end with '}'", whole);
        const std::string body = trim(rhs.substr(brace + 1, close - brace - 1));
        if (!body.empty())
            for (const std::string& e : split_top(body, ',')) {
                in.dims.push_back(term_of(e, whole));
                if (in.dims.back().is_symbol) note_symbol(t, in.dims.back().symbol);
            }
        return;
    }
    if (rhs.empty() || rhs[0] != '[') fail("'" + rhs + "' is not a shape such as [2,3]", whole);
    const size_t close = rhs.find(']');
    if (close == std::string::npos) fail("missing ']' in '" + rhs + "'", whole);
    const std::string body = trim(rhs.substr(1, close - 1));
    if (!body.empty()) {
        for (const std::string& raw : split_top(body, ',')) {
            const std::string d = trim(raw);
            if (d.find("..") != std::string::npos || d.find('|') != std::string::npos) {
                // Inline range: an anonymous symbol of its own.
                const std::string name = "#" + std::to_string(t.symbols.size() + 1);
                t.symbols[name] = parse_value_set(d, whole);
                DimTerm term;
                term.is_symbol = true;
                term.symbol = name;
                in.dims.push_back(term);
                note_symbol(t, name);
                continue;
            }
            in.dims.push_back(term_of(d, whole));
            if (in.dims.back().is_symbol) {
                if (in.dims.back().negate) fail("a dim cannot be negative: '" + d + "'", whole);
                note_symbol(t, in.dims.back().symbol);
            }
        }
    }
    std::string rest = rhs.substr(close + 1);
    while (!rest.empty()) {
        if (rest[0] == ':') {
            const size_t tilde = rest.find('~');
            const std::string name = rest.substr(1, tilde == std::string::npos ? std::string::npos : tilde - 1);
            try {
                in.dtype = parse_data_type(name);
            } catch (const Error&) {
                fail("unknown dtype '" + name + "'", whole);
            }
            rest = tilde == std::string::npos ? "" : rest.substr(tilde);
        } else if (rest[0] == '~') {
            const size_t colon = rest.find(':');
            const std::string r = rest.substr(1, colon == std::string::npos ? std::string::npos : colon - 1);
            const size_t dots = r.find("..", r.size() > 0 && r[0] == '-' ? 1 : 0);
            if (dots == std::string::npos) fail("bad value range '~" + r + "' (expected ~lo..hi)", whole);
            const std::string lo = r.substr(0, dots), hi = r.substr(dots + 2);
            double dlo = 0, dhi = 0;
            if (parse_double(lo, dlo) && parse_double(hi, dhi)) {
                if (!(dlo < dhi)) fail("empty value range '~" + r + "'", whole);
                in.frange = std::make_pair(dlo, dhi);
            } else {
                DimTerm a = term_of(lo, whole), b = term_of(hi, whole);
                if (a.is_symbol) note_symbol(t, a.symbol);
                if (b.is_symbol) note_symbol(t, b.symbol);
                in.range = std::make_pair(a, b);
            }
            rest = colon == std::string::npos ? "" : rest.substr(colon);
        } else {
            fail("unexpected '" + rest + "' after the shape", whole);
        }
    }
}

int64_t eval(const DimTerm& d, const std::map<std::string, int64_t>& env) {
    if (!d.is_symbol) return d.value;
    const int64_t v = env.at(d.symbol);
    return d.negate ? -v : v;
}

std::string fmt_double(double v) {
    char buf[64];
    std::snprintf(buf, sizeof(buf), "%g", v);
    return buf;
}

Case instantiate(const CaseTemplate& t, const std::map<std::string, int64_t>& env) {
    Case c;
    for (const InputTemplate& in : t.inputs) {
        CaseInput ci;
        ci.name = in.name;
        ci.named = in.named;
        ci.dtype = in.dtype;
        if (in.is_values) {
            std::vector<int64_t> vals;
            for (const DimTerm& d : in.dims) vals.push_back(eval(d, env));
            ci.shape = Shape({static_cast<int64_t>(vals.size())});
            ci.values = std::move(vals);
        } else {
            std::vector<int64_t> dims;
            for (const DimTerm& d : in.dims) {
                const int64_t v = eval(d, env);
                if (v < 0) fail("dim " + std::to_string(dims.size()) + " of '" + in.name + "' is negative", t.text);
                dims.push_back(v);
            }
            ci.shape = Shape(std::move(dims));
        }
        if (in.frange) ci.range = in.frange;
        if (in.range) {
            const double lo = static_cast<double>(eval(in.range->first, env));
            const double hi = static_cast<double>(eval(in.range->second, env));
            ci.range = std::make_pair(lo, hi);
        }
        c.inputs.push_back(std::move(ci));
    }
    return c;
}

void check_symbols(const CaseTemplate& t) {
    for (const std::string& s : t.symbol_order)
        if (!t.symbols.count(s)) fail("symbol '" + s + "' is used but not given values (e.g. " + s + "=1..4)", t.text);
    for (const auto& kv : t.symbols)
        if (std::find(t.symbol_order.begin(), t.symbol_order.end(), kv.first) == t.symbol_order.end())
            fail("symbol '" + kv.first + "' is given values but not used", t.text);
}

}   // namespace

std::string Case::spec() const {
    std::string out;
    for (const CaseInput& in : inputs) {
        if (!out.empty()) out += ' ';
        if (in.named) out += in.name + "=";
        if (in.values) {
            if (in.dtype) out += to_string(*in.dtype);
            out += '{';
            for (size_t i = 0; i < in.values->size(); ++i) out += (i ? "," : "") + std::to_string((*in.values)[i]);
            out += '}';
            continue;
        }
        out += '[';
        for (size_t i = 0; i < in.shape.size(); ++i) out += (i ? "," : "") + std::to_string(in.shape[i]);
        out += ']';
        if (in.dtype) out += std::string(":") + to_string(*in.dtype);
        if (in.range) out += "~" + fmt_double(in.range->first) + ".." + fmt_double(in.range->second);
    }
    return out;
}

CaseTemplate parse_case(const std::string& text) {
    CaseTemplate t;
    t.text = trim(text);
    if (t.text.empty()) fail("empty case", text);
    std::set<std::string> names;
    for (const std::string& item : split_items(t.text)) {
        // `name=...` when an '=' comes before any bracket.
        const size_t eq = item.find('=');
        const size_t br = item.find_first_of("[{");
        if (eq != std::string::npos && (br == std::string::npos || eq < br)) {
            const std::string name = item.substr(0, eq), rhs = item.substr(eq + 1);
            if (!is_identifier(name)) fail("'" + name + "' is not a name", t.text);
            if (!names.insert(name).second) fail("'" + name + "' is given twice", t.text);
            if (!rhs.empty() && (rhs[0] == '[' || rhs.find('{') != std::string::npos)) {
                InputTemplate in;
                in.name = name;
                in.named = true;
                parse_tensor(t, in, rhs, t.text);
                t.inputs.push_back(std::move(in));
            } else {
                if (rhs.empty()) fail("symbol '" + name + "' has no values", t.text);
                t.symbols[name] = parse_value_set(rhs, t.text);
            }
        } else {
            InputTemplate in;
            in.name = "in" + std::to_string(t.inputs.size());
            parse_tensor(t, in, item, t.text);
            t.inputs.push_back(std::move(in));
        }
    }
    if (t.inputs.empty()) fail("no input shapes", t.text);
    check_symbols(t);
    return t;
}

std::vector<CaseTemplate> parse_shapes(const std::string& text) {
    std::vector<CaseTemplate> out;
    for (const std::string& part : split_top(text, ';'))
        if (!trim(part).empty()) out.push_back(parse_case(part));
    if (out.empty()) throw Error("no cases in \"" + text + "\"", shapes_ctx());
    return out;
}

std::vector<Case> expand(const CaseTemplate& t, size_t limit) {
    size_t total = 1;
    for (const std::string& s : t.symbol_order) {
        total *= t.symbols.at(s).size();
        if (total > limit) fail("the sweep has more than " + std::to_string(limit) + " cases (use --random N)", t.text);
    }
    std::vector<Case> out;
    std::vector<size_t> idx(t.symbol_order.size(), 0);
    for (size_t n = 0; n < total; ++n) {
        std::map<std::string, int64_t> env;
        for (size_t i = 0; i < idx.size(); ++i) env[t.symbol_order[i]] = t.symbols.at(t.symbol_order[i])[idx[i]];
        out.push_back(instantiate(t, env));
        // Odometer: the last symbol varies fastest.
        for (size_t i = idx.size(); i-- > 0;) {
            if (++idx[i] < t.symbols.at(t.symbol_order[i]).size()) break;
            idx[i] = 0;
        }
    }
    return out;
}

std::vector<Case> expand_random(const CaseTemplate& t, size_t n, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<Case> out;
    for (size_t k = 0; k < n; ++k) {
        std::map<std::string, int64_t> env;
        for (const std::string& s : t.symbol_order) {
            const auto& vals = t.symbols.at(s);
            std::uniform_int_distribution<size_t> pick(0, vals.size() - 1);
            env[s] = vals[pick(rng)];
        }
        out.push_back(instantiate(t, env));
    }
    return out;
}

std::vector<SweepSection> parse_sweep_text(const std::string& text, const std::string& file) {
    std::vector<SweepSection> out;
    std::istringstream in(text);
    std::string line;
    int lineno = 0;
    while (std::getline(in, line)) {
        ++lineno;
        const size_t hash = line.find('#');
        if (hash != std::string::npos) line = line.substr(0, hash);
        line = trim(line);
        if (line.empty()) continue;
        try {
            if (line.rfind("attrs", 0) == 0 &&
                (line.size() == 5 || std::isspace(static_cast<unsigned char>(line[5])))) {
                SweepSection s;
                s.line = lineno;
                std::istringstream items(line.substr(5));
                std::string kv;
                while (items >> kv) {
                    const size_t eq = kv.find('=');
                    if (eq == std::string::npos || eq == 0)
                        throw Error("attribute '" + kv + "' is not k=v", shapes_ctx());
                    s.attrs.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
                }
                out.push_back(std::move(s));
                continue;
            }
            if (out.empty()) {
                out.emplace_back();
                out.back().line = lineno;
            }
            for (CaseTemplate& t : parse_shapes(line)) out.back().cases.push_back(std::move(t));
        } catch (const Error& e) {
            ErrorContext c = shapes_ctx(file, lineno);
            throw Error(e.message(), c);
        }
    }
    out.erase(std::remove_if(out.begin(), out.end(), [](const SweepSection& s) { return s.cases.empty(); }), out.end());
    if (out.empty()) throw Error("the sweep file has no cases", shapes_ctx(file));
    return out;
}

std::vector<SweepSection> parse_sweep_file(const std::string& path) {
    return parse_sweep_text(tools::read_file_capped(path, tools::kMaxTextFileBytes, "sweep file"), path);
}

Attributes parse_attrs(const std::vector<AttrSpec>& schema,
                       const std::vector<std::pair<std::string, std::string>>& raw) {
    Attributes out;
    for (const auto& kv : raw) {
        // Named copies, not a structured binding: lambdas below capture them,
        // which C++17 does not allow for bindings (clang rejects it).
        const std::string& key = kv.first;
        const std::string& value = kv.second;
        ErrorContext ctx;
        ctx.field = key;
        auto spec = std::find_if(schema.begin(), schema.end(), [&](const AttrSpec& s) { return s.name == key; });
        if (spec == schema.end()) {
            std::string known;
            for (const AttrSpec& s : schema) known += (known.empty() ? "" : ", ") + s.name;
            throw Error(
                "unknown attribute '" + key + "'" + (known.empty() ? " (the op has none)" : " (known: " + known + ")"),
                ctx);
        }
        std::string v = trim(value);
        auto list = [&]() {
            std::string body = v;
            if (!body.empty() && body.front() == '[' && body.back() == ']') body = body.substr(1, body.size() - 2);
            std::vector<std::string> items;
            if (!trim(body).empty())
                for (const std::string& p : split_top(body, ',')) items.push_back(trim(p));
            return items;
        };
        auto bad = [&](const char* what) {
            return Error("attribute '" + key + "': '" + value + "' is not " + what, ctx);
        };
        switch (spec->type) {
            case AttrType::Int: {
                int64_t i = 0;
                if (!tools::parse_int64(v, i)) throw bad("an integer");
                out.set(key, i);
                break;
            }
            case AttrType::Float: {
                double d = 0;
                if (!parse_double(v, d)) throw bad("a number");
                out.set(key, d);
                break;
            }
            case AttrType::Bool: {
                if (v == "true" || v == "1") out.set(key, true);
                else if (v == "false" || v == "0") out.set(key, false);
                else throw bad("true/false");
                break;
            }
            case AttrType::String: out.set(key, v); break;
            case AttrType::Ints: {
                std::vector<int64_t> xs;
                for (const std::string& p : list()) {
                    int64_t i = 0;
                    if (!tools::parse_int64(p, i)) throw bad("a list of integers");
                    xs.push_back(i);
                }
                out.set(key, xs);
                break;
            }
            case AttrType::Floats: {
                std::vector<double> xs;
                for (const std::string& p : list()) {
                    double d = 0;
                    if (!parse_double(p, d)) throw bad("a list of numbers");
                    xs.push_back(d);
                }
                out.set(key, xs);
                break;
            }
            case AttrType::Strings: {
                out.set(key, list());
                break;
            }
        }
    }
    return Attributes::validate(schema, out);
}

}   // namespace dynrt::harness
