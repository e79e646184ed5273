#include "dynrt/op_copy.hpp"

#include <cstring>

#include "dynrt/checked_math.hpp"
#include "dynrt/error.hpp"
#include "dynrt/op_sdk.hpp"

namespace dynrt {

void add_copy_host_impls(ModuleRegistrar& reg, const std::string& op, CopyHostOptions options) {
    add_host_impls(reg, op, [op, options](HostCall& call) {
        const size_t count = call.in_shape(0).count();
        if (call.out_shape(0).count() != count) {
            ErrorContext where;
            where.node = call.node();
            where.op = op;
            const std::string counted = options.with_count ? " (" + std::to_string(count) + " elements)" : "";
            throw Error(
                "cannot " + op + " " + call.in_shape(0).to_string() + counted + " to " + call.out_shape(0).to_string(),
                where);
        }
        const std::string what = op + ": bytes of the input";
        const size_t bytes = checked_mul(count, byte_size(call.in_type(0)), what.c_str());
        if (bytes != 0) std::memcpy(call.out_raw(0), call.in_raw(0), bytes);
    });
}

}   // namespace dynrt
