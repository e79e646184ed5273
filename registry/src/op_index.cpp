#include "dynrt/op_index.hpp"

namespace dynrt {

bool is_index_type(DataType t) { return t == DataType::i32 || t == DataType::i64; }

std::string check_index_input(const KernelParams& p, size_t i, const std::string& name, size_t max_rank) {
    if (max_rank > 0) {
        std::string why = check_max_rank(p, max_rank);
        if (!why.empty()) return why;
    }
    if (is_index_type(p.inputs.at(i).dtype)) return {};
    return name + " type " + to_string(p.inputs.at(i).dtype) + " is not i32 or i64";
}

std::string check_max_rank(const KernelParams& p, size_t max_rank) {
    for (const Layout& l : p.inputs)
        if (l.shape.rank() > max_rank)
            return "rank " + std::to_string(l.shape.rank()) + " is above " + std::to_string(max_rank);
    return {};
}

std::vector<size_t> axis_index_positions(const HostCall& call, const std::string& op) {
    const Shape& data = call.in_shape(0);
    const Shape& ind = call.in_shape(1);
    const size_t rank = data.rank(), axis = axis_attr(call.attrs(), rank);
    const int64_t len = data[axis];
    const std::vector<int64_t> idx = call.get_ints(1);
    const std::vector<size_t> ds = strides_of(data), is = strides_of(ind);
    std::vector<size_t> pos(idx.size());
    for (size_t j = 0; j < idx.size(); ++j) {
        const int64_t v = idx[j] < 0 ? idx[j] + len : idx[j];
        if (v < 0 || v >= len) {
            ErrorContext where;
            where.node = call.node();
            where.op = op;
            throw Error("index " + std::to_string(idx[j]) + " (at position " + std::to_string(j) +
                            ") is out of range for axis " + std::to_string(axis) + " of size " + std::to_string(len) +
                            " in data " + data.to_string(),
                        where);
        }
        size_t at = 0;
        for (size_t d = 0; d < rank; ++d)
            at += (d == axis ? static_cast<size_t>(v) : j / is[d] % static_cast<size_t>(ind[d])) * ds[d];
        pos[j] = at;
    }
    return pos;
}

}   // namespace dynrt
