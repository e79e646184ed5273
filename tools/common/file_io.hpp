// Reading input files the tools are given (pipelines, .npy, .pb, sweep files)
// without trusting them: only regular files are read (a FIFO would block, a
// character device such as /dev/zero never ends, a folder is no file), and no
// more than a cap is read, checked against the size before reading and again
// while reading (a file may grow).
#pragma once

#include <cstddef>
#include <string>

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

}   // namespace dynrt::tools
