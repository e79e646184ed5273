// Bounded reads of regular files.
#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

#include "dynrt/error.hpp"
#include "int_range.hpp"

namespace dynrt::tools {

ErrorContext in_file(const std::string& path) {
    ErrorContext c;
    c.file = path;
    return c;
}

namespace {

const char* kind_of(mode_t m) {
    if (S_ISDIR(m)) return "a directory";
    if (S_ISFIFO(m)) return "a FIFO";
    if (S_ISCHR(m)) return "a character device";
    if (S_ISBLK(m)) return "a block device";
    if (S_ISSOCK(m)) return "a socket";
    return "not a regular file";
}

// Closes the descriptor on every path out.
struct Fd {
    int fd;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
};

}   // namespace

size_t max_tensor_file_bytes() {
    const char* env = std::getenv("DYNRT_MAX_TENSOR_FILE_BYTES");
    if (!env || !*env) return kDefaultMaxTensorFileBytes;
    int64_t v = 0;
    if (!parse_int64(env, v) || v < 1) {
        ErrorContext c;
        c.field = "DYNRT_MAX_TENSOR_FILE_BYTES";
        throw Error(std::string("DYNRT_MAX_TENSOR_FILE_BYTES must be a positive byte count, got '") + env + "'", c);
    }
    return static_cast<size_t>(v);
}

std::string read_file_capped(const std::string& path, size_t max_bytes, const std::string& what) {
    // O_NONBLOCK: opening a FIFO with no writer would block; the fstat below
    // then refuses it.
    Fd f{::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK)};
    if (f.fd < 0) throw Error("cannot open " + what + ": " + std::strerror(errno), in_file(path));
    struct stat st {};
    if (::fstat(f.fd, &st) != 0) throw Error("cannot stat " + what + ": " + std::strerror(errno), in_file(path));
    if (!S_ISREG(st.st_mode))
        throw Error("the " + what + " is " + kind_of(st.st_mode) + ", not a regular file", in_file(path));
    const auto too_big = [&](const std::string& size) {
        return Error(
            "the " + what + " holds " + size + " bytes, more than the limit of " + std::to_string(max_bytes) + " bytes",
            in_file(path));
    };
    if (st.st_size < 0 || static_cast<uint64_t>(st.st_size) > max_bytes) throw too_big(std::to_string(st.st_size));
    // Back to blocking reads (a regular file never blocks anyway).
    const int flags = ::fcntl(f.fd, F_GETFL);
    if (flags >= 0) (void)::fcntl(f.fd, F_SETFL, flags & ~O_NONBLOCK);

    std::string out;
    out.reserve(static_cast<size_t>(st.st_size));
    char buf[65536];
    while (true) {
        const ssize_t n = ::read(f.fd, buf, sizeof buf);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error("cannot read " + what + ": " + std::strerror(errno), in_file(path));
        }
        if (n == 0) break;
        if (out.size() + static_cast<size_t>(n) > max_bytes) throw too_big("more than " + std::to_string(max_bytes));
        out.append(buf, static_cast<size_t>(n));
    }
    return out;
}

}   // namespace dynrt::tools
