#include "dynrt/op_import.hpp"

#include <algorithm>

#include "dynrt/error.hpp"

namespace dynrt {

const char* ImportAttr::kind_name(Kind k) {
    switch (k) {
        case Kind::Int: return "INT";
        case Kind::Float: return "FLOAT";
        case Kind::String: return "STRING";
        case Kind::Ints: return "INTS";
        case Kind::Floats: return "FLOATS";
        case Kind::Strings: return "STRINGS";
        case Kind::Tensor: return "TENSOR";
        case Kind::Other: break;
    }
    return "another type";
}

const ImportAttr* ImportContext::attr(const std::string& a) const {
    auto it = node_.attrs.find(a);
    return it == node_.attrs.end() ? nullptr : &it->second;
}

// The attribute `a` when the node has it with type `want`; null when absent.
// Any other type is an error: reading the field of the wrong type would give 0
// (Softmax axis=1.0 normalising over axis 0), and onnxruntime refuses it too.
const ImportAttr* ImportContext::typed(const std::string& a, ImportAttr::Kind want) const {
    const ImportAttr* p = attr(a);
    if (p == nullptr || p->kind == want) return p;
    ErrorContext where;
    where.node = node_.name;
    where.op = node_.op_type;
    where.field = a;
    throw Error(std::string("attribute '") + a + "' is " + ImportAttr::kind_name(p->kind) + ", " + node_.op_type +
                    " expects " + ImportAttr::kind_name(want) + " (the model is malformed; onnxruntime refuses it too)",
                where);
}

int64_t ImportContext::i(const std::string& a, int64_t def) const {
    const ImportAttr* p = typed(a, ImportAttr::Kind::Int);
    return p ? p->i : def;
}

double ImportContext::f(const std::string& a, double def) const {
    const ImportAttr* p = typed(a, ImportAttr::Kind::Float);
    return p ? p->f : def;
}

std::string ImportContext::s(const std::string& a, const std::string& def) const {
    const ImportAttr* p = typed(a, ImportAttr::Kind::String);
    return p ? p->s : def;
}

std::vector<int64_t> ImportContext::ints(const std::string& a) const {
    const ImportAttr* p = typed(a, ImportAttr::Kind::Ints);
    return p ? p->ints : std::vector<int64_t>{};
}

std::vector<double> ImportContext::floats(const std::string& a) const {
    const ImportAttr* p = typed(a, ImportAttr::Kind::Floats);
    return p ? p->floats : std::vector<double>{};
}

size_t ImportContext::count_present() const {
    return static_cast<size_t>(
        std::count_if(node_.inputs.begin(), node_.inputs.end(), [](const ImportInput& in) { return in.present; }));
}

bool ImportContext::only_attrs(std::initializer_list<const char*> known) {
    for (const auto& kv : node_.attrs) {
        if (std::none_of(known.begin(), known.end(), [&](const char* k) { return kv.first == k; }))
            return unsupported("attribute '" + kv.first + "' is not supported");
    }
    return true;
}

bool ImportContext::unsupported(const std::string& why) {
    out.unsupported = why;
    return false;
}

void ImportContext::use_inputs(std::initializer_list<size_t> ks) {
    for (size_t k : ks)
        if (present(k)) out.inputs.push_back(k);
}

void ImportContext::use_all_inputs() {
    for (size_t k = 0; k < node_.inputs.size(); ++k)
        if (present(k)) out.inputs.push_back(k);
}

ImportFn import_plain(std::map<std::string, AttrValue> attrs) {
    return [attrs](ImportContext& c) {
        if (!c.only_attrs({})) return false;
        for (const auto& kv : attrs) c.set(kv.first, kv.second);
        c.use_all_inputs();
        return true;
    };
}

}   // namespace dynrt
