// Files the tools read and write, without trusting what is at the path.
//
// Reading (pipelines, .npy, .pb, sweep files): only regular files are read (a
// FIFO would block, a character device such as /dev/zero never ends, a folder
// is no file), and no more than a cap is read, checked against the size before
// reading and again while reading (a file may grow).
//
// Writing (`dynrt run --report`, `--save-outputs`): a destination that exists
// must be a regular file (a folder for folders), looked at with lstat, so a
// symbolic link, a FIFO, a socket or a device such as /dev/null is refused and
// left as it is, never replaced by the rename that writes the file. The CLI
// checks each destination before anything runs (check_output_file,
// check_output_folder); write_file_replacing checks again just before its
// rename. File names made from tensor names (output_file_names) hold only
// [A-Za-z0-9._-], so a name can never lead out of the folder it is written
// into.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "dynrt/error.hpp"

namespace dynrt::tools {

// Pipelines, sweep files: 16 MiB.
inline constexpr size_t kMaxTextFileBytes = size_t{16} << 20;
// Tensor files (.npy, .pb) by default: 4 GiB; DYNRT_MAX_TENSOR_FILE_BYTES
// (a decimal byte count) sets another cap.
inline constexpr size_t kDefaultMaxTensorFileBytes = size_t{4} << 30;

// The cap for tensor files: DYNRT_MAX_TENSOR_FILE_BYTES when set (throws
// dynrt::Error when it is not a positive integer), else the default.
size_t max_tensor_file_bytes();

// An error context naming `path` as the file.
ErrorContext in_file(const std::string& path);

// The whole of `path`. Throws dynrt::Error (file = path) when it cannot be
// opened, is not a regular file, or holds more than `max_bytes`; `what` names
// the kind of file in messages ("pipeline file", ".npy file").
std::string read_file_capped(const std::string& path, size_t max_bytes, const std::string& what);

// ---- writing -------------------------------------------------------------------

// Throws dynrt::Error (file = path, field = option) when `path` exists and is
// not a regular file: "--report: the path is a FIFO, not a regular file; it is
// left as it is". Nothing at `path` is fine. lstat looks at `path` without
// its trailing '/' (with them it would follow a link).
void check_output_file(const std::string& path, const std::string& option);
// Same for a folder: `path` may be missing or a folder, nothing else (a link
// to a folder is refused too).
void check_output_folder(const std::string& path, const std::string& option);

// Writes `content` to `path` through a new temporary file next to it
// (`path.tmp-<pid>`, created exclusively, never through a link) and a rename,
// so readers never see half a file. `path` is checked with check_output_file
// (`what` as the option) before the temporary file is made and again right
// before the rename; on any error the temporary file is removed and `path`
// is as it was.
void write_file_replacing(const std::string& path, const std::string& content, const std::string& what);

// The same, written piece by piece (a trace of a long run): the temporary
// file is made by the constructor (after check_output_file), append() adds
// text, commit() closes it and renames it over `path` after checking `path`
// again. Destroyed without commit(), the temporary file is removed and
// `path` is as it was.
class ReplacingFile {
public:
    ReplacingFile(const std::string& path, const std::string& what);
    ~ReplacingFile();
    ReplacingFile(const ReplacingFile&) = delete;
    ReplacingFile& operator=(const ReplacingFile&) = delete;
    void append(const std::string& text);
    void commit();
    const std::string& temporary_path() const { return tmp_; }

private:
    std::string path_, what_, tmp_;
    ErrorContext where_;
    int fd_ = -1;
    bool committed_ = false;
};

// File names for tensors named `names` (graph outputs), one per name, in the
// same order, distinct, each `<stem>.npy` (`extension`) where the stem is:
// the name with every byte outside [A-Za-z0-9._-] replaced by '_' (":" of
// "node:1" and "/" of "model/dense/BiasAdd:0" alike), leading dots made '_'
// (no ".", ".." or hidden name), "output" for an empty name, and a name over
// kMaxFileStemBytes cut and ended with '_' and 8 hex digits of a hash of the
// whole name. Names whose stem is the name itself get it first; a stem taken
// already gets "_2", "_3", ... in the order of `names`. The same names give the
// same files.
inline constexpr size_t kMaxFileStemBytes = 120;
std::vector<std::string> output_file_names(const std::vector<std::string>& names, const std::string& extension);

}   // namespace dynrt::tools
