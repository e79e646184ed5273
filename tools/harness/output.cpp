// The harness report as a console table and as JSON.
#include <cmath>
#include <cstdio>
#include <sstream>

#include "harness.hpp"
#include "json_writer.hpp"

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

}   // namespace

std::string format_table(const Report& r, bool bench) {
    std::vector<std::string> head = {"impl", "device", "kind", "attrs", "case", "max_abs", "max_rel", "status"};
    if (bench) {
        head.push_back("ms");
        head.push_back("rate");
    }
    std::vector<std::vector<std::string>> cells;
    for (const Row& row : r.rows) {
        std::vector<std::string> c = {row.impl,
                                      row.device,
                                      row.shape_type,
                                      row.attrs.empty() ? "-" : row.attrs,
                                      row.the_case.spec(),
                                      num(row.max_abs),
                                      num(row.max_rel),
                                      row.status};
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
    tools::JsonWriter j;
    j.begin_object().field("op", r.op).field("reference", r.reference).newline();
    j.key("rows").begin_array();
    for (const Row& row : r.rows) {
        j.newline(2).begin_object();
        j.field("impl", row.impl).field("device", row.device).field("kind", row.shape_type);
        j.field("phase", row.phase).field("attrs", row.attrs).field("case", row.the_case.spec());
        j.key("inputs").begin_array();
        for (const CaseInput& in : row.the_case.inputs) j.value(in.shape.to_string());
        j.end_array();
        j.field("ran", row.ran).field("status", row.status).field("detail", row.detail);
        j.field("max_abs", row.max_abs).field("max_rel", row.max_rel);
        j.field("rtol", row.tol.rel).field("atol", row.tol.abs);
        if (row.ms >= 0) j.field("ms", row.ms);
        if (row.rate >= 0) j.field("rate", row.rate).field("rate_unit", row.rate_unit);
        j.field("reproduce", row.repro).end_object();
    }
    j.newline(1).end_array().newline();
    j.key("notes").begin_array();
    for (const std::string& n : r.notes) j.value(n);
    j.end_array().newline();
    j.key("summary").begin_object();
    j.field("passed", r.passed).field("failed", r.failed).field("not_applicable", r.skipped);
    j.end_object().end_object();
    return j.str() + "\n";
}

}   // namespace dynrt::harness
