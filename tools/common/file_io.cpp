// Bounded reads of regular files; writes that replace only regular files;
// file names from tensor names.
#include "file_io.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <optional>
#include <set>

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
    if (S_ISLNK(m)) return "a symbolic link";
    return "not a regular file";
}

ErrorContext for_option(const std::string& path, const std::string& option) {
    ErrorContext c = in_file(path);
    c.field = option;
    return c;
}

// `path` without trailing '/' (but "/" stays "/"): lstat("link/") would
// follow the link.
std::string without_trailing_slashes(std::string path) {
    while (path.size() > 1 && path.back() == '/') path.pop_back();
    return path;
}

// lstat's mode of `path`; nothing when nothing is there. Other failures
// (a folder on the way that cannot be searched) are errors naming `option`.
std::optional<mode_t> mode_at(const std::string& path, const std::string& option) {
    struct stat st {};
    if (::lstat(without_trailing_slashes(path).c_str(), &st) == 0) return st.st_mode;
    if (errno == ENOENT || errno == ENOTDIR) return std::nullopt;
    throw Error(option + ": cannot look at the path: " + std::strerror(errno), for_option(path, option));
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

// ---- writing -------------------------------------------------------------------

void check_output_file(const std::string& path, const std::string& option) {
    const std::optional<mode_t> m = mode_at(path, option);
    if (!m || S_ISREG(*m)) return;
    throw Error(option + ": the path is " + kind_of(*m) + ", not a regular file; it is left as it is",
                for_option(path, option));
}

void check_output_folder(const std::string& path, const std::string& option) {
    const std::optional<mode_t> m = mode_at(path, option);
    if (!m || S_ISDIR(*m)) return;
    throw Error(option + ": the path exists and is " + (S_ISREG(*m) ? "a regular file" : kind_of(*m)) +
                    ", not a directory; it is left as it is",
                for_option(path, option));
}

ReplacingFile::ReplacingFile(const std::string& path, const std::string& what)
    : path_(path), what_(what), where_(for_option(path, what)) {
    check_output_file(path, what);
    // O_EXCL | O_NOFOLLOW: the temporary name is a new file of ours, never
    // whatever (a link, a FIFO) someone put there; a name taken by another
    // writer gets a counter.
    const std::string base = path + ".tmp-" + std::to_string(::getpid());
    for (int i = 0; i < 100 && fd_ < 0; ++i) {
        const std::string name = i == 0 ? base : base + "-" + std::to_string(i);
        fd_ = ::open(name.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0666);
        if (fd_ >= 0) tmp_ = name;
        else if (errno != EEXIST) throw Error(std::string("cannot write: ") + std::strerror(errno), where_);
    }
    if (fd_ < 0) throw Error("cannot write: every temporary name next to the file is taken", where_);
}

ReplacingFile::~ReplacingFile() {
    if (fd_ >= 0) ::close(fd_);
    if (!tmp_.empty() && !committed_) ::unlink(tmp_.c_str());
}

void ReplacingFile::append(const std::string& text) {
    if (fd_ < 0) throw Error("cannot write: the file was closed", where_);
    size_t done = 0;
    while (done < text.size()) {
        const ssize_t n = ::write(fd_, text.data() + done, text.size() - done);
        if (n < 0) {
            if (errno == EINTR) continue;
            throw Error(std::string("cannot write: ") + std::strerror(errno) + (errno == ENOSPC ? " (disk full)" : ""),
                        where_);
        }
        done += static_cast<size_t>(n);
    }
}

void ReplacingFile::commit() {
    if (fd_ < 0) throw Error("cannot write: the file was closed", where_);
    const int fd = fd_;
    fd_ = -1;
    if (::close(fd) != 0) throw Error(std::string("cannot write: ") + std::strerror(errno), where_);
    // Again right before the rename: the path may have changed since the
    // first check (a run takes a while).
    check_output_file(path_, what_);
    if (::rename(tmp_.c_str(), path_.c_str()) != 0)
        throw Error(std::string("cannot write: ") + std::strerror(errno), where_);
    committed_ = true;
}

void write_file_replacing(const std::string& path, const std::string& content, const std::string& what) {
    ReplacingFile f(path, what);
    f.append(content);
    f.commit();
}

namespace {

bool safe_file_byte(unsigned char c) {
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
           c == '-';
}

// FNV-1a, 32 bits: the same on every host and build.
uint32_t name_hash(const std::string& s) {
    uint32_t h = 2166136261u;
    for (unsigned char c : s) {
        h ^= c;
        h *= 16777619u;
    }
    return h;
}

std::string file_stem(const std::string& name) {
    if (name.empty()) return "output";
    std::string s = name;
    for (char& c : s)
        if (!safe_file_byte(static_cast<unsigned char>(c))) c = '_';
    for (char& c : s) {
        if (c != '.') break;
        c = '_';
    }
    if (s.size() > kMaxFileStemBytes) {
        char hash[16];
        std::snprintf(hash, sizeof hash, "_%08x", static_cast<unsigned>(name_hash(name)));
        s = s.substr(0, kMaxFileStemBytes - std::strlen(hash)) + hash;
    }
    return s;
}

}   // namespace

std::vector<std::string> output_file_names(const std::vector<std::string>& names, const std::string& extension) {
    std::vector<std::string> stems(names.size());
    std::set<std::string> taken;
    // Names that are file names already keep them, wherever they come.
    for (size_t i = 0; i < names.size(); ++i) {
        const std::string s = file_stem(names[i]);
        if (s == names[i] && taken.insert(s).second) stems[i] = s;
    }
    for (size_t i = 0; i < names.size(); ++i) {
        if (!stems[i].empty()) continue;
        const std::string s = file_stem(names[i]);
        std::string candidate = s;
        for (size_t n = 2; !taken.insert(candidate).second; ++n) candidate = s + "_" + std::to_string(n);
        stems[i] = candidate;
    }
    for (std::string& s : stems) s += extension;
    return stems;
}

}   // namespace dynrt::tools
