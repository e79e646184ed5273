// Kernel objects and launches.
//
// A cl_kernel keeps its arguments as state, so one KernelImpl serialises
// "set arguments + enqueue" under its own mutex: impls may be shared by
// requests running on several threads. A Memory argument with a byte offset is
// passed as a sub-buffer (cached on its buffer), so kernels index from 0.
// Each kernel object remembers the value of every argument it was last given
// and skips clSetKernelArg for the unchanged ones (buffers are compared by
// their never-reused serial, not by address or cl_mem handle, so a freed
// buffer whose handle is reused is still set again).
#include <chrono>
#include <cstring>
#include <string>

#include "dynrt/error.hpp"
#include "ocl_common.hpp"

namespace dynrt::ocl {

KernelImpl::KernelImpl(ContextPtr ctx, std::shared_ptr<Program> program, const std::string& name)
    : ctx_(std::move(ctx)), program_(std::move(program)), name_(name) {
    cl_int err = CL_SUCCESS;
    kernel_ = clCreateKernel(program_->program, name.c_str(), &err);
    if (err == CL_INVALID_KERNEL_NAME)
        throw Error("OpenCL kernel '" + name + "' is not defined in its program (" + cl_error_name(err) +
                    "): check the __kernel name");
    check(err, "cannot create OpenCL kernel '" + name + "'");
    clGetKernelWorkGroupInfo(kernel_, ctx_->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof work_group_size_,
                             &work_group_size_, nullptr);
}

KernelImpl::~KernelImpl() {
    if (kernel_) clReleaseKernel(kernel_);
}

namespace {

std::string arg_what(const std::string& kernel, size_t i) {
    return "kernel '" + kernel + "' argument " + std::to_string(i);
}

// Sets argument `i` unless the kernel object already holds that value (then
// the call is skipped: the common case when a node runs again on the same
// buffers and shapes). `cached` is the kernel's record of argument i; it is
// updated only after a successful clSetKernelArg, so a failed set is retried.
// Messages are built only on failure: this runs for every argument of every
// launch.
void set_arg(const KernelImpl& k, cl_uint i, const OclArg& a, KernelImpl::ArgValue& cached) {
    KernelImpl::ArgValue v;
    v.kind = a.kind;
    v.set = true;
    const OclBuffer* ob = nullptr;
    switch (a.kind) {
        case OclArg::Kind::memory:
        case OclArg::Kind::buffer: {
            const Buffer* b =
                a.kind == OclArg::Kind::memory ? (a.memory ? a.memory->buffer().get() : nullptr) : a.buffer;
            ob = exact_cast<OclBuffer>(b);
            if (!ob)
                throw Error(arg_what(k.name(), i) + ": " +
                            (b ? "the buffer was not allocated by an ocl engine" : "null buffer"));
            v.buffer_serial = ob->serial();
            v.offset = a.kind == OclArg::Kind::memory ? a.memory->offset() : 0;
            break;
        }
        case OclArg::Kind::i32: v.int_value = static_cast<cl_int>(a.int_value); break;
        case OclArg::Kind::i64: v.int_value = a.int_value; break;
        case OclArg::Kind::f32: {
            const auto f = static_cast<cl_float>(a.float_value);
            uint32_t bits = 0;
            std::memcpy(&bits, &f, sizeof bits);
            v.int_value = bits;
            break;
        }
        case OclArg::Kind::local: v.int_value = static_cast<int64_t>(a.local_bytes); break;
    }
    if (cached.set && cached.kind == v.kind && cached.buffer_serial == v.buffer_serial && cached.offset == v.offset &&
        cached.int_value == v.int_value)
        return;

    cl_int err = CL_SUCCESS;
    switch (a.kind) {
        case OclArg::Kind::memory:
        case OclArg::Kind::buffer: {
            const cl_mem m = ob->view_at(v.offset);
            err = clSetKernelArg(k.kernel(), i, sizeof(cl_mem), &m);
            break;
        }
        case OclArg::Kind::i32: {
            const auto x = static_cast<cl_int>(a.int_value);
            err = clSetKernelArg(k.kernel(), i, sizeof x, &x);
            break;
        }
        case OclArg::Kind::i64: {
            const auto x = static_cast<cl_long>(a.int_value);
            err = clSetKernelArg(k.kernel(), i, sizeof x, &x);
            break;
        }
        case OclArg::Kind::f32: {
            const auto x = static_cast<cl_float>(a.float_value);
            err = clSetKernelArg(k.kernel(), i, sizeof x, &x);
            break;
        }
        case OclArg::Kind::local: err = clSetKernelArg(k.kernel(), i, a.local_bytes, nullptr); break;
    }
    if (err != CL_SUCCESS) {
        cached.set = false;
        check(err, "cannot set " + arg_what(k.name(), i));
    }
    cached = v;
}

}   // namespace

void launch_kernel(const Context& ctx, Stream& stream, const OclKernel& kernel, const std::vector<OclArg>& args,
                   const size_t gws[3], const size_t lws[3], size_t dims) {
    const auto* k = exact_cast<KernelImpl>(&kernel);
    if (!k) throw Error("launch: kernel '" + kernel.name() + "' was not built by this ocl engine");
    if (dims < 1 || dims > 3)
        throw Error("launch of kernel '" + k->name() + "': dims must be 1..3, got " + std::to_string(dims));
    bool use_lws = false;
    for (size_t d = 0; d < dims; ++d) {
        if (gws[d] == 0) return;   // nothing to run (an empty tensor)
        if (lws[d] != 0) use_lws = true;
    }
    if (use_lws) {
        for (size_t d = 0; d < dims; ++d)
            if (lws[d] == 0 || gws[d] % lws[d] != 0)
                throw Error("launch of kernel '" + k->name() + "': global size " + std::to_string(gws[d]) + " of dim " +
                            std::to_string(d) + " is not a multiple of local size " + std::to_string(lws[d]) +
                            " (use dispatch_for())");
    }
    auto* os = exact_cast<OclStream>(&stream);
    const bool must_wait = os == nullptr;   // not an ocl stream: the engine's queue, and wait
    cl_command_queue q = os ? os->queue() : ctx.default_queue;
    const bool want_event = os && os->profiling();

    std::lock_guard<std::mutex> lock(k->mutex());
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<KernelImpl::ArgValue>& cache = k->arg_values();
    if (cache.size() < args.size()) cache.resize(args.size());   // grows once per kernel object
    for (size_t i = 0; i < args.size(); ++i) set_arg(*k, static_cast<cl_uint>(i), args[i], cache[i]);
    cl_event ev = nullptr;
    const cl_int err = clEnqueueNDRangeKernel(q, k->kernel(), static_cast<cl_uint>(dims), nullptr, gws,
                                              use_lws ? lws : nullptr, 0, nullptr, want_event ? &ev : nullptr);
    if (err != CL_SUCCESS) {
        std::string sizes;
        for (size_t d = 0; d < dims; ++d)
            sizes += (d ? "x" : "") + std::to_string(gws[d]) + (use_lws ? "/" + std::to_string(lws[d]) : "");
        throw Error("cannot launch OpenCL kernel '" + k->name() + "' (global/local " + sizes + ") on " + ctx.name +
                    ": " + cl_error_name(err));
    }
    if (os) {
        const auto ns = std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0);
        os->on_launch(ev, static_cast<uint64_t>(ns.count()));
    }
    if (must_wait) check(clFinish(q), "waiting for kernel '" + k->name() + "'");
}

}   // namespace dynrt::ocl
