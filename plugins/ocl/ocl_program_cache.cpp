// Program builds and the on-disk binary cache.
//
// A program is looked up in three places, cheapest first: this engine's memory
// cache, the disk cache, a build from source (whose binary then goes to disk).
// A disk entry is named by a hash of everything that can change the binary
// (source with its defines, options, platform, device and driver versions) and
// repeats that identity inside, with a checksum of the binary, so a truncated,
// corrupted or foreign file is detected before the driver sees it; such an entry
// is rebuilt from source and overwritten, never trusted. Only regular files of
// at most kMaxCacheEntryBytes are read (a FIFO, a link to a device or a huge
// file is rejected before a byte is read), and an entry the driver refuses
// (clCreateProgramWithBinary or clBuildProgram fails) is rebuilt from source
// too. Every rejection counts in OclBuildStats::disk_cache_rejects and is
// logged when the engine is verbose. Entries are written to a fresh temp file
// and renamed, so concurrent processes never read half a file.
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <iostream>

#include "dynrt/error.hpp"
#include "ocl_common.hpp"

namespace dynrt::ocl {

namespace {

constexpr char kMagic[8] = {'D', 'Y', 'N', 'R', 'T', 'C', 'L', 'B'};
constexpr uint32_t kFormatVersion = 1;

uint64_t fnv1a(const void* data, size_t n, uint64_t seed) {
    const auto* p = static_cast<const unsigned char*>(data);
    uint64_t h = seed;
    for (size_t i = 0; i < n; ++i) {
        h ^= p[i];
        h *= 0x100000001b3ULL;
    }
    return h;
}

// splitmix64 finaliser: decorrelates the second hash from the first.
uint64_t mix(uint64_t x) {
    x ^= x >> 30;
    x *= 0xbf58476d1ce4e5b9ULL;
    x ^= x >> 27;
    x *= 0x94d049bb133111ebULL;
    x ^= x >> 31;
    return x;
}

uint64_t checksum(const std::vector<unsigned char>& v) { return fnv1a(v.data(), v.size(), 0xcbf29ce484222325ULL); }

template <typename T>
void put(std::string& out, T v) {
    out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

template <typename T>
bool get(const std::string& in, size_t& pos, T& v) {
    if (in.size() - pos < sizeof v) return false;
    std::memcpy(&v, in.data() + pos, sizeof v);
    pos += sizeof v;
    return true;
}

}   // namespace

std::string hash_hex(const std::string& data) {
    const uint64_t a = fnv1a(data.data(), data.size(), 0xcbf29ce484222325ULL);
    const uint64_t b = mix(fnv1a(data.data(), data.size(), 0x84222325cbf29ce4ULL) ^ data.size());
    char buf[33];
    std::snprintf(buf, sizeof buf, "%016llx%016llx", static_cast<unsigned long long>(a),
                  static_cast<unsigned long long>(b));
    return buf;
}

namespace {

// Reads the whole of `path` into `out` when it is a regular file of at most
// kMaxCacheEntryBytes. The checks come before any read: lstat() refuses links
// and special files without opening them; open() with O_NOFOLLOW (a link
// swapped in after lstat) and O_NONBLOCK (a FIFO swapped in: open would wait
// for a writer) and fstat() on the opened descriptor (the same regular file
// lstat saw) make sure that what is read is that file, and the read stops at
// the size fstat gave, so a device file can never be read until memory runs out.
bool read_regular_file(const std::string& path, std::string& out, std::string& why) {
    struct stat ls {};
    if (::lstat(path.c_str(), &ls) != 0) {
        why = errno == ENOENT ? "missing" : std::string("cannot stat: ") + std::strerror(errno);
        return false;
    }
    if (S_ISLNK(ls.st_mode)) {
        why = "a symbolic link, not a regular file";
        return false;
    }
    if (!S_ISREG(ls.st_mode)) {
        why = "not a regular file";
        return false;
    }
    if (static_cast<uint64_t>(ls.st_size) > kMaxCacheEntryBytes) {
        why = "larger than the " + std::to_string(kMaxCacheEntryBytes >> 20) + " MiB cap (" +
              std::to_string(static_cast<uint64_t>(ls.st_size)) + " bytes)";
        return false;
    }
    const int fd = ::open(path.c_str(), O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
    if (fd < 0) {
        why = errno == ENOENT ? "missing" : std::string("cannot open: ") + std::strerror(errno);
        return false;
    }
    struct stat os {};
    bool ok = ::fstat(fd, &os) == 0 && S_ISREG(os.st_mode) && os.st_dev == ls.st_dev && os.st_ino == ls.st_ino &&
              static_cast<uint64_t>(os.st_size) <= kMaxCacheEntryBytes;
    if (!ok) {
        why = "replaced while opened (not the regular file checked)";
    } else {
        out.resize(static_cast<size_t>(os.st_size));
        size_t got = 0;
        while (got < out.size()) {
            const ssize_t n = ::read(fd, &out[got], out.size() - got);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            got += static_cast<size_t>(n);
        }
        if (got != out.size()) {
            ok = false;
            why = "truncated while read";
        }
    }
    ::close(fd);
    return ok;
}

}   // namespace

bool read_cache_entry(const std::string& path, const std::string& identity, std::vector<unsigned char>& binary,
                      std::string& why) {
    std::string in;
    if (!read_regular_file(path, in, why)) return false;
    size_t pos = 0;
    if (in.size() < sizeof kMagic || std::memcmp(in.data(), kMagic, sizeof kMagic) != 0) {
        why = "not a dynrt binary-cache file";
        return false;
    }
    pos = sizeof kMagic;
    uint32_t version = 0, id_len = 0;
    uint64_t bin_len = 0, sum = 0;
    if (!get(in, pos, version) || version != kFormatVersion) {
        why = "format version differs";
        return false;
    }
    if (!get(in, pos, id_len) || in.size() - pos < id_len) {
        why = "truncated";
        return false;
    }
    if (in.compare(pos, id_len, identity) != 0 || id_len != identity.size()) {
        why = "built for another source, device or driver";
        return false;
    }
    pos += id_len;
    if (!get(in, pos, bin_len) || !get(in, pos, sum) || in.size() - pos != bin_len || bin_len == 0) {
        why = "truncated";
        return false;
    }
    binary.assign(in.begin() + static_cast<std::ptrdiff_t>(pos), in.end());
    if (checksum(binary) != sum) {
        why = "checksum mismatch (corrupted)";
        return false;
    }
    return true;
}

bool write_cache_entry(const std::string& path, const std::string& identity, const std::vector<unsigned char>& binary,
                       std::string& why) {
    std::string out(kMagic, sizeof kMagic);
    put(out, kFormatVersion);
    put(out, static_cast<uint32_t>(identity.size()));
    out += identity;
    put(out, static_cast<uint64_t>(binary.size()));
    put(out, checksum(binary));
    out.append(reinterpret_cast<const char*>(binary.data()), binary.size());

    static std::atomic<unsigned> counter{0};
    const std::string tmp = path + ".tmp." + std::to_string(getpid()) + "." + std::to_string(counter++);
    {
        // A fresh file of our own: O_EXCL|O_NOFOLLOW never writes through a
        // link or into a file someone else placed under the temp name.
        const int fd = ::open(tmp.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
        if (fd < 0) {
            why = "cannot create " + tmp + ": " + std::strerror(errno);
            return false;
        }
        size_t done = 0;
        while (done < out.size()) {
            const ssize_t n = ::write(fd, out.data() + done, out.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n <= 0) break;
            done += static_cast<size_t>(n);
        }
        const bool closed = ::close(fd) == 0;
        if (done != out.size() || !closed) {
            why = "cannot write " + tmp;
            std::error_code ec;
            std::filesystem::remove(tmp, ec);
            return false;
        }
    }
    std::error_code ec;
    std::filesystem::rename(tmp, path, ec);
    if (ec) {
        why = "cannot rename " + tmp + ": " + ec.message();
        std::filesystem::remove(tmp, ec);
        return false;
    }
    return true;
}

Program::~Program() {
    if (program) clReleaseProgram(program);
}

namespace {

uint64_t env_count(const char* name, uint64_t fallback) {
    const char* v = std::getenv(name);
    if (!v || !*v) return fallback;
    const std::string text = v;
    if (text.size() > 15 || text.find_first_not_of("0123456789") != std::string::npos)
        throw Error("bad " + std::string(name) + "='" + text + "': expected an integer >= 0 (0: no cap)");
    return std::stoull(text);
}

}   // namespace

ProgramCacheLimits program_cache_limits_from_env() {
    ProgramCacheLimits l;
    l.max_programs = static_cast<size_t>(env_count("DYNRT_OCL_PROGRAMS", l.max_programs));
    l.max_disk_bytes = env_count("DYNRT_OCL_DISK_CACHE_MB", l.max_disk_bytes >> 20) << 20;
    return l;
}

ProgramCache::ProgramCache(ContextPtr ctx, std::string dir, ProgramCacheLimits limits)
    : ctx_(std::move(ctx)), dir_(std::move(dir)), limits_(limits) {
    if (dir_.empty()) return;
    std::error_code ec;
    std::filesystem::create_directories(dir_, ec);
    if (ec) {
        // A read-only home must not stop the device from working: run uncached.
        if (ctx_->verbose)
            std::cerr << "ocl: binary cache disabled, cannot create " << dir_ << ": " << ec.message() << "\n";
        dir_.clear();
    }
}

std::shared_ptr<Program> ProgramCache::get(const std::string& key_source, const std::string& source,
                                           const std::string& options, const std::string& kernel_name) {
    const OclDeviceLimits& l = ctx_->limits;
    // Everything that can change the binary besides the source itself.
    const std::string identity = "dynrt-ocl-program\noptions: " + options + "\nplatform: " + l.platform_name + " / " +
                                 l.platform_version + "\ndevice: " + l.device_name + " / " + l.device_version +
                                 "\ndriver: " + l.driver_version + "\nsource: " + hash_hex(key_source) + "\n";
    const std::string key = hash_hex(identity);

    std::shared_ptr<Entry> entry;
    {
        std::lock_guard<std::mutex> lock(mutex_);
        auto& slot = entries_[key];
        if (!slot) {
            slot = std::make_shared<Entry>();
            lru_.push_front(key);
            slot->lru = lru_.begin();
        } else {
            lru_.splice(lru_.begin(), lru_, slot->lru);
        }
        entry = slot;
        evict_programs();
    }
    // Per-entry lock: two threads asking for one program build it once, while
    // builds of other programs go ahead in parallel.
    std::lock_guard<std::mutex> lock(entry->mutex);
    if (entry->program) {
        ++memory_hits_;
        return entry->program;
    }
    const std::string path = dir_.empty() ? std::string() : dir_ + "/" + key + ".clbin";
    if (!path.empty()) entry->program = load_binary(path, identity, options);
    if (!entry->program) {
        entry->program = build_source(source, options, kernel_name);
        if (!path.empty()) store_binary(*entry->program, path, identity);
    }
    return entry->program;
}

// The least recently used programs leave the memory cache. A thread building
// or loading one holds its entry, so the build still completes and its
// caller gets the program; a later request builds it again.
void ProgramCache::evict_programs() {
    if (limits_.max_programs == 0) return;
    while (entries_.size() > limits_.max_programs) {
        const std::string key = lru_.back();
        lru_.pop_back();
        entries_.erase(key);
        ++memory_evictions_;
    }
}

// Keeps the disk cache within its cap: the folder is counted once, then kept
// up to date by what this engine writes; over the cap, the entries least
// recently used (oldest file time: hits touch theirs) are deleted down to 3/4
// of it. Other processes' writes are seen at the next count.
void ProgramCache::bound_disk(uint64_t written) {
    if (limits_.max_disk_bytes == 0 || dir_.empty()) return;
    std::lock_guard<std::mutex> lock(disk_mutex_);
    disk_bytes_ += written;
    if (disk_counted_ && disk_bytes_ <= limits_.max_disk_bytes) return;
    struct File {
        std::filesystem::file_time_type time;
        uint64_t size;
        std::filesystem::path path;
    };
    std::vector<File> files;
    uint64_t total = 0;
    std::error_code ec;
    for (std::filesystem::directory_iterator it(dir_, ec), end; !ec && it != end; it.increment(ec)) {
        std::error_code e2;
        if (it->path().extension() != ".clbin" || !it->is_regular_file(e2)) continue;
        const uint64_t size = it->file_size(e2);
        const auto time = it->last_write_time(e2);
        if (e2) continue;
        files.push_back({time, size, it->path()});
        total += size;
    }
    disk_counted_ = true;
    disk_bytes_ = total;
    if (total <= limits_.max_disk_bytes) return;
    std::sort(files.begin(), files.end(), [](const File& a, const File& b) { return a.time < b.time; });
    const uint64_t target = limits_.max_disk_bytes / 4 * 3;
    for (const File& f : files) {
        if (disk_bytes_ <= target) break;
        std::error_code e3;
        if (std::filesystem::remove(f.path, e3)) {
            disk_bytes_ -= f.size;
            ++disk_evictions_;
        }
    }
    if (ctx_->verbose)
        std::cerr << "ocl: binary cache over " << (limits_.max_disk_bytes >> 20) << " MiB: " << disk_evictions_.load()
                  << " entries evicted so far\n";
}

std::shared_ptr<Program> ProgramCache::load_binary(const std::string& path, const std::string& identity,
                                                   const std::string& options) {
    std::vector<unsigned char> bin;
    std::string why;
    if (!read_cache_entry(path, identity, bin, why)) {
        if (why != "missing") {
            ++disk_rejects_;
            if (ctx_->verbose) std::cerr << "ocl: rebuilding " << path << ": " << why << "\n";
        }
        return nullptr;
    }
    const unsigned char* ptr = bin.data();
    const size_t len = bin.size();
    cl_int status = CL_SUCCESS, err = CL_SUCCESS;
    auto p = std::make_shared<Program>();
    p->program = clCreateProgramWithBinary(ctx_->context, 1, &ctx_->device, &len, &ptr, &status, &err);
    if (err == CL_SUCCESS && status == CL_SUCCESS)
        err = clBuildProgram(p->program, 1, &ctx_->device, options.c_str(), nullptr, nullptr);
    else if (err == CL_SUCCESS) err = status;
    if (err != CL_SUCCESS) {
        // The driver refused a well-formed entry (e.g. a driver update kept its
        // version string): treat it as stale.
        ++disk_rejects_;
        if (ctx_->verbose)
            std::cerr << "ocl: rebuilding " << path << ": driver refused it, " << cl_error_name(err) << "\n";
        return nullptr;
    }
    p->from_binary_cache = true;
    ++disk_hits_;
    ::utimensat(AT_FDCWD, path.c_str(), nullptr, 0);   // recently used: the last to be evicted
    return p;
}

namespace {

// The driver's build log of `program` ("" when it has none).
std::string build_log(cl_program program, cl_device_id device) {
    size_t size = 0;
    std::string log;
    if (clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, 0, nullptr, &size) != CL_SUCCESS || size <= 1)
        return log;
    log.resize(size);
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_LOG, size, &log[0], nullptr);
    while (!log.empty() && (log.back() == '\0' || log.back() == '\n')) log.pop_back();
    return log;
}

}   // namespace

// Warnings are the kernels' authors' business, not the user's: a build
// passes -w (which changes no code, so the cache key leaves it out) unless
// the engine is verbose, when the build log of each program built is shown.
// Some drivers print a warning count to stderr themselves ("10 warnings
// generated.") however the program is built; -w silences that too.
std::shared_ptr<Program> ProgramCache::build_source(const std::string& source, const std::string& options,
                                                    const std::string& kernel_name) {
    const char* src = source.c_str();
    const size_t len = source.size();
    cl_int err = CL_SUCCESS;
    auto p = std::make_shared<Program>();
    p->program = clCreateProgramWithSource(ctx_->context, 1, &src, &len, &err);
    check(err, "cannot create the OpenCL program of kernel '" + kernel_name + "'");
    const std::string build_options = ctx_->verbose ? options : options + " -w";
    err = clBuildProgram(p->program, 1, &ctx_->device, build_options.c_str(), nullptr, nullptr);
    if (err != CL_SUCCESS) {
        const std::string log = build_log(p->program, ctx_->device);
        throw Error("OpenCL build of kernel '" + kernel_name + "' failed on " + ctx_->name + " (" + cl_error_name(err) +
                    ", options \"" + build_options + "\"); build log:\n" +
                    (log.empty() ? std::string("(empty)") : log));
    }
    if (ctx_->verbose) {
        const std::string log = build_log(p->program, ctx_->device);
        if (!log.empty()) std::cerr << "ocl: build log of kernel '" << kernel_name << "':\n" << log << "\n";
    }
    ++source_builds_;
    return p;
}

void ProgramCache::store_binary(const Program& p, const std::string& path, const std::string& identity) {
    size_t size = 0;
    if (clGetProgramInfo(p.program, CL_PROGRAM_BINARY_SIZES, sizeof size, &size, nullptr) != CL_SUCCESS || size == 0)
        return;   // the driver keeps no binary: nothing to cache
    std::vector<unsigned char> bin(size);
    unsigned char* ptr = bin.data();
    if (clGetProgramInfo(p.program, CL_PROGRAM_BINARIES, sizeof ptr, &ptr, nullptr) != CL_SUCCESS) return;
    std::string why;
    if (write_cache_entry(path, identity, bin, why)) {
        ++disk_writes_;
        bound_disk(bin.size() + identity.size());
    } else if (ctx_->verbose) {
        std::cerr << "ocl: binary cache: " << why << "\n";
    }
}

OclBuildStats ProgramCache::stats() const {
    OclBuildStats s;
    s.source_builds = source_builds_.load();
    s.disk_cache_hits = disk_hits_.load();
    s.disk_cache_rejects = disk_rejects_.load();
    s.disk_cache_writes = disk_writes_.load();
    s.memory_cache_hits = memory_hits_.load();
    s.memory_cache_evictions = memory_evictions_.load();
    s.disk_cache_evictions = disk_evictions_.load();
    return s;
}

void ProgramCache::clear() {
    std::lock_guard<std::mutex> lock(mutex_);
    entries_.clear();   // kernels already handed out keep their programs alive
    lru_.clear();
}

}   // namespace dynrt::ocl
