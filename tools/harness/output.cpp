// The harness report as a console table and as JSON.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "harness.hpp"

namespace dynrt::harness {

namespace {

std::string num(double v) {
    if (std::isinf(v)) return "inf";
    if (v == 0) return "0";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.2e", v);
    return buf;
}

std::string fixed(double v, int digits) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.*f", digits, v);
    return buf;
}

std::string num3(double v) {
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.3g", v);
    return buf;
}

std::string json_quote(const std::string& s) {
    std::string out = "\"";
    for (unsigned char c : s) {
        switch (c) {
            case '"': out += "\\\""; break;
            case '\\': out += "\\\\"; break;
            case '\n': out += "\\n"; break;
            case '\t': out += "\\t"; break;
            default:
                if (c < 0x20) {
                    char buf[8];
                    std::snprintf(buf, sizeof(buf), "\\u%04x", c);
                    out += buf;
                } else {
                    out += static_cast<char>(c);
                }
        }
    }
    return out + "\"";
}

std::string json_num(double v) {
    if (!std::isfinite(v)) return "null";
    char buf[32];
    std::snprintf(buf, sizeof(buf), "%.6g", v);
    return buf;
}

}  // namespace

std::string format_table(const Report& r, bool bench) {
    std::vector<std::string> head = {"impl", "device", "kind", "attrs", "case", "max_abs", "max_rel", "status"};
    if (bench) {
        head.push_back("ms");
        head.push_back("rate");
    }
    std::vector<std::vector<std::string>> cells;
    for (const Row& row : r.rows) {
        std::vector<std::string> c = {row.impl, row.device, row.shape_type, row.attrs.empty() ? "-" : row.attrs,
                                      row.the_case.spec(), num(row.max_abs), num(row.max_rel), row.status};
        if (bench) {
            c.push_back(row.ms >= 0 ? fixed(row.ms, 4) : "-");
            c.push_back(row.rate >= 0 ? num3(row.rate) + " " + row.rate_unit : "-");
        }
        cells.push_back(std::move(c));
    }
    std::vector<size_t> width(head.size());
    for (size_t i = 0; i < head.size(); ++i) width[i] = head[i].size();
    for (const auto& c : cells)
        for (size_t i = 0; i < c.size(); ++i) width[i] = std::max(width[i], c[i].size());
    auto line = [&](const std::vector<std::string>& c) {
        std::string out;
        for (size_t i = 0; i < c.size(); ++i) {
            out += c[i];
            if (i + 1 < c.size()) out += std::string(width[i] - c[i].size() + 2, ' ');
        }
        return out + "\n";
    };
    std::ostringstream os;
    os << "test-op " << r.op << ", reference " << r.reference << "\n";
    os << line(head);
    for (size_t k = 0; k < r.rows.size(); ++k) {
        os << line(cells[k]);
        const Row& row = r.rows[k];
        if (row.failed()) {
            os << "    " << row.status << ": " << row.detail << "\n";
            os << "    reproduce: " << row.repro << "\n";
        } else if (row.status != "pass" && !row.detail.empty()) {
            os << "    " << row.detail << "\n";
        }
    }
    for (const std::string& n : r.notes) os << "note: " << n << "\n";
    os << "summary: " << r.passed << " passed, " << r.failed << " failed, " << r.skipped << " not applicable\n";
    return os.str();
}

std::string to_json(const Report& r) {
    std::ostringstream os;
    os << "{\"op\": " << json_quote(r.op) << ", \"reference\": " << json_quote(r.reference) << ",\n \"rows\": [";
    for (size_t k = 0; k < r.rows.size(); ++k) {
        const Row& row = r.rows[k];
        os << (k ? ",\n  " : "\n  ") << "{\"impl\": " << json_quote(row.impl) << ", \"device\": " << json_quote(row.device)
           << ", \"kind\": " << json_quote(row.shape_type) << ", \"phase\": " << json_quote(row.phase)
           << ", \"attrs\": " << json_quote(row.attrs) << ", \"case\": " << json_quote(row.the_case.spec())
           << ", \"inputs\": [";
        for (size_t i = 0; i < row.the_case.inputs.size(); ++i)
            os << (i ? ", " : "") << json_quote(row.the_case.inputs[i].shape.to_string());
        os << "], \"ran\": " << json_quote(row.ran) << ", \"status\": " << json_quote(row.status)
           << ", \"detail\": " << json_quote(row.detail) << ", \"max_abs\": " << json_num(row.max_abs)
           << ", \"max_rel\": " << json_num(row.max_rel) << ", \"rtol\": " << json_num(row.tol.rel)
           << ", \"atol\": " << json_num(row.tol.abs);
        if (row.ms >= 0) os << ", \"ms\": " << json_num(row.ms);
        if (row.rate >= 0) os << ", \"rate\": " << json_num(row.rate) << ", \"rate_unit\": " << json_quote(row.rate_unit);
        os << ", \"reproduce\": " << json_quote(row.repro) << "}";
    }
    os << "\n ], \"notes\": [";
    for (size_t k = 0; k < r.notes.size(); ++k) os << (k ? ", " : "") << json_quote(r.notes[k]);
    os << "],\n \"summary\": {\"passed\": " << r.passed << ", \"failed\": " << r.failed
       << ", \"not_applicable\": " << r.skipped << "}}\n";
    return os.str();
}

}  // namespace dynrt::harness
