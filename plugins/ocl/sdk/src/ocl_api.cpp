// Host-side helpers of the OpenCL API (dynrt/ocl_api.hpp): JIT defines for
// static and shape-agnostic builds, shape_info planning and packing, and the
// fixed set of local work sizes. No OpenCL here: op modules use these without
// linking libOpenCL.
#include "dynrt/ocl_api.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>
#include <string>

#include "dynrt/error.hpp"

namespace dynrt {

JitDefines shape_agnostic_defines(bool is_dynamic) {
    JitDefines d;
    d.emplace_back("IS_DYNAMIC", is_dynamic ? "1" : "0");
    d.emplace_back("OPTIONAL_SHAPE_INFO_ARG",
                   is_dynamic ? "__global const int* shape_info_base, const int shape_info_offset," : "");
    d.emplace_back("OPTIONAL_SHAPE_INFO_TENSOR", is_dynamic ? "shape_info_base, shape_info_offset," : "");
    if (is_dynamic) d.emplace_back("shape_info", "(shape_info_base + shape_info_offset)");
    d.emplace_back("SHAPE_INFO_DIMS", std::to_string(kShapeInfoDims));
    return d;
}

void OclShapeInfo::update(OclDevice& device, Stream& stream, const std::vector<int32_t>& packed) {
    if (bytes_ == 0) return;
    if (packed.size() * sizeof(int32_t) != bytes_)
        throw Error("shape_info: " + std::to_string(packed.size() * sizeof(int32_t)) +
                    " bytes packed for a region of " + std::to_string(bytes_));
    if (needs_region(stream)) {
        region_.reset();   // back to its arena first: the new one may reuse it
        region_ = device.shape_info_region(stream, bytes_);
        last_.clear();
    }
    if (packed == last_) return;
    device.write_async(stream, region_->buffer(), region_->offset(), packed.data(), bytes_);
    last_ = packed;
}

void OclShapeInfo::push_args(std::vector<OclArg>& args) const {
    if (bytes_ == 0) return;
    if (!region_) throw Error("shape_info: arguments asked for before the first update");
    args.push_back(OclArg::buf(region_->buffer()));
    args.push_back(OclArg::i32(static_cast<int32_t>(region_->offset() / sizeof(int32_t))));
}

ShapeInfoPlan plan_shape_info(const std::vector<Layout>& inputs, const std::vector<Layout>& outputs) {
    ShapeInfoPlan plan;
    int next = 0;
    auto assign = [&next](const std::vector<Layout>& ls, std::vector<int>& slots) {
        slots.reserve(ls.size());
        for (const Layout& l : ls) slots.push_back(l.is_static() ? -1 : next++);
    };
    assign(inputs, plan.input_slots);
    assign(outputs, plan.output_slots);
    plan.slots = static_cast<size_t>(next);
    return plan;
}

namespace {

int64_t pad_at(const std::vector<int64_t>& v, size_t j) { return j < v.size() ? v[j] : 0; }

void pack_one(const Layout& l, const char* what, size_t index, int32_t* slot) {
    auto fail = [&](const std::string& why) {
        throw Error(std::string("shape_info: ") + what + " " + std::to_string(index) + " (" + l.to_string() +
                    "): " + why);
    };
    if (!l.is_static()) fail("the runtime layout is not static");
    const Shape s = l.get_shape();
    if (s.rank() > kShapeInfoDims)
        fail("rank " + std::to_string(s.rank()) + " is above " + std::to_string(kShapeInfoDims));
    const size_t lead = kShapeInfoDims - s.rank();
    constexpr int64_t kMax = std::numeric_limits<int32_t>::max();
    for (size_t j = 0; j < lead; ++j) {
        slot[j] = 1;
        slot[kShapeInfoDims + j] = 0;
        slot[2 * kShapeInfoDims + j] = 0;
    }
    for (size_t j = 0; j < s.rank(); ++j) {
        if (s[j] > kMax) fail("dim " + std::to_string(j) + " does not fit int32");
        const int64_t lo = pad_at(l.padding.lower, j), up = pad_at(l.padding.upper, j);
        if (lo < 0 || up < 0 || lo > kMax || up > kMax || s[j] + lo + up > kMax)
            fail("the padding of dim " + std::to_string(j) + " is negative or does not fit int32");
        slot[lead + j] = static_cast<int32_t>(s[j]);
        slot[kShapeInfoDims + lead + j] = static_cast<int32_t>(lo);
        slot[2 * kShapeInfoDims + lead + j] = static_cast<int32_t>(up);
    }
}

}   // namespace

void pack_shape_info(const ShapeInfoPlan& plan, const std::vector<Layout>& inputs, const std::vector<Layout>& outputs,
                     std::vector<int32_t>& out) {
    if (inputs.size() != plan.input_slots.size() || outputs.size() != plan.output_slots.size())
        throw Error("shape_info: the plan is for " + std::to_string(plan.input_slots.size()) + " inputs and " +
                    std::to_string(plan.output_slots.size()) + " outputs, got " + std::to_string(inputs.size()) +
                    " and " + std::to_string(outputs.size()));
    out.resize(plan.ints());
    for (size_t i = 0; i < inputs.size(); ++i)
        if (plan.input_slots[i] >= 0)
            pack_one(inputs[i], "input", i, out.data() + plan.input_slots[i] * kShapeInfoSlotInts);
    for (size_t i = 0; i < outputs.size(); ++i)
        if (plan.output_slots[i] >= 0)
            pack_one(outputs[i], "output", i, out.data() + plan.output_slots[i] * kShapeInfoSlotInts);
}

const char* ocl_type_name(DataType t) {
    switch (t) {
        case DataType::f32: return "float";
        case DataType::f16: return "half";
        case DataType::i32: return "int";
        case DataType::i64: return "long";
        case DataType::u8: return "uchar";
        case DataType::i8: return "char";
        case DataType::boolean: return "uchar";
        case DataType::f64: return "double";
    }
    return "uchar";
}

JitDefines tensor_jit_defines(const std::string& name, const Layout& layout, int slot) {
    const PartialShape& ps = layout.shape;
    const size_t rank = ps.rank();
    if (rank > kShapeInfoDims)
        throw Error("JIT constants for " + name + ": rank " + std::to_string(rank) + " is above " +
                    std::to_string(kShapeInfoDims));
    const bool dynamic = !ps.is_static();
    if (dynamic && slot < 0)
        throw Error("JIT constants for " + name + ": " + layout.to_string() +
                    " has dynamic dims but no shape_info slot");
    const auto info = [slot](size_t at) {
        return "(shape_info[" + std::to_string(static_cast<size_t>(slot) * kShapeInfoSlotInts + at) + "])";
    };
    JitDefines d;
    d.emplace_back(name + "_TYPE", ocl_type_name(layout.dtype));
    d.emplace_back(name + "_RANK", std::to_string(rank));
    const size_t lead = kShapeInfoDims - rank;
    // dims[j], lower[j], upper[j] as expressions (literals where known).
    std::vector<std::string> dims(kShapeInfoDims, "1"), lower(kShapeInfoDims, "0"), upper(kShapeInfoDims, "0");
    std::string length;
    bool padded_literal = false;
    for (size_t j = lead; j < kShapeInfoDims; ++j) {
        const Dimension& dim = ps[j - lead];
        dims[j] = dim.is_static() ? std::to_string(dim.get_length()) : info(j);
        length += length.empty() ? dims[j] : "*" + dims[j];
        if (dynamic) {
            // The runtime padding comes with the runtime dims.
            lower[j] = info(kShapeInfoDims + j);
            upper[j] = info(2 * kShapeInfoDims + j);
        } else {
            const int64_t lo = j - lead < layout.padding.lower.size() ? layout.padding.lower[j - lead] : 0;
            const int64_t up = j - lead < layout.padding.upper.size() ? layout.padding.upper[j - lead] : 0;
            lower[j] = std::to_string(lo);
            upper[j] = std::to_string(up);
            padded_literal |= lo != 0 || up != 0;
        }
    }
    for (size_t j = 0; j < kShapeInfoDims; ++j) {
        d.emplace_back(name + "_DIM" + std::to_string(j), dims[j]);
        d.emplace_back(name + "_PAD_LOWER" + std::to_string(j), lower[j]);
        d.emplace_back(name + "_PAD_UPPER" + std::to_string(j), upper[j]);
    }
    d.emplace_back(name + "_LENGTH", length.empty() ? "1" : "(" + length + ")");

    std::string padded;
    if (dynamic) {
        for (size_t j = lead; j < kShapeInfoDims; ++j)
            padded += (padded.empty() ? "" : "|") + lower[j] + "|" + upper[j];
        padded = padded.empty() ? "0" : "((" + padded + ") != 0)";
    } else {
        padded = padded_literal ? "1" : "0";
    }
    d.emplace_back(name + "_PADDED", padded);

    // Storage index of logical row-major index i: split i over the logical
    // dims from the innermost one, shift each coordinate by its lower padding
    // and recombine with the padded pitches.
    std::string phys;
    std::string stride = "1", pitch = "1";
    for (size_t j = kShapeInfoDims; j-- > lead;) {
        const std::string coord = "((((ulong)(i)) / (" + stride + ")) % (ulong)(" + dims[j] + "))";
        phys +=
            (phys.empty() ? "" : " + ") + std::string("(") + coord + " + (ulong)(" + lower[j] + ")) * (" + pitch + ")";
        stride += "*(ulong)(" + dims[j] + ")";
        pitch += "*(ulong)(" + dims[j] + " + " + lower[j] + " + " + upper[j] + ")";
    }
    if (phys.empty()) phys = "0";
    std::string phys_def;
    if (padded == "0") phys_def = "((ulong)(i))";
    else if (padded == "1") phys_def = "(" + phys + ")";
    else phys_def = "(" + name + "_PADDED ? (" + phys + ") : (ulong)(i))";
    d.emplace_back(name + "_PHYS(i)", phys_def);
    return d;
}

std::string jit_float_literal(double v) {
    char buf[64];
    std::snprintf(buf, sizeof buf, "((float)(%.17g))", v);
    return buf;
}

std::pair<std::string, std::string> jit_data_f16(DataType t) { return {"DATA_F16", t == DataType::f16 ? "1" : "0"}; }

std::string jit_dims_product(const std::string& name, size_t rank, size_t from, size_t to) {
    std::string s;
    for (size_t d = from; d < to; ++d)
        s += (s.empty() ? "" : "*") + name + "_DIM" + std::to_string(kShapeInfoDims - rank + d);
    return "(" + (s.empty() ? std::string("1") : s) + ")";
}

std::array<size_t, 3> pick_local_size(const size_t work[3], size_t dims, const OclDeviceLimits& limits) {
    if (dims < 1 || dims > 3) throw Error("pick_local_size: dims must be 1..3, got " + std::to_string(dims));
    size_t total = limits.preferred_local_size ? limits.preferred_local_size : 64;
    if (limits.max_work_group_size) total = std::min(total, limits.max_work_group_size);
    // Power of two, so that the split below is exact and the set stays small.
    size_t log2 = 0;
    while ((size_t{2} << log2) <= total) ++log2;
    std::array<size_t, 3> lws{1, 1, 1};
    size_t active[3];
    size_t n = 0;
    for (size_t d = 0; d < dims; ++d)
        if (work[d] > 1) active[n++] = d;
    if (n == 0) return lws;   // a single work-item
    // Split the exponent over the active dims, the first ones getting the rest.
    for (size_t k = 0; k < n; ++k) {
        const size_t share = log2 / n + (k < log2 % n ? 1 : 0);
        size_t v = size_t{1} << share;
        const size_t d = active[k];
        if (limits.max_work_item_sizes[d]) v = std::min(v, limits.max_work_item_sizes[d]);
        lws[d] = v;
    }
    return lws;
}

OclDispatch dispatch_for(const size_t work[3], size_t dims, const OclDeviceLimits& limits) {
    OclDispatch d;
    d.dims = dims;
    d.lws = pick_local_size(work, dims, limits);
    for (size_t i = 0; i < 3; ++i) {
        const size_t w = i < dims ? work[i] : 1;
        d.gws[i] = (w + d.lws[i] - 1) / d.lws[i] * d.lws[i];
        if (i >= dims) d.lws[i] = 1;
    }
    return d;
}

}   // namespace dynrt
