// Byte copies between a tensor and its parts along one axis, for the ops that
// join or cut a tensor (concat, split), any data type.
//
// With the dims before the axis collapsed to `outer` and the axis and the dims
// after it to a row, the whole tensor is `outer` rows, each row the parts'
// rows one after another. copy_row_parts() moves every part's `outer` rows
// between the part and the whole tensor, spread over the engine's threads as
// contiguous chunks of the whole tensor's bytes: whole rows when there are
// many, pieces of rows when there are few (a concat along axis 0 is one row).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <vector>

#include "dynrt/cpu_parallel.hpp"

namespace dynrt {

// Chunks below this many bytes are not worth a thread.
constexpr size_t kRowPartsGrainBytes = size_t{64} << 10;

// One part: row o of it is `bytes` bytes at src + o * src_stride, copied to
// dst + o * dst_stride. Concat: src is the input, dst the output at the
// part's offset in a row; split the other way round.
struct RowPartCopy {
    const unsigned char* src = nullptr;
    size_t src_stride = 0;
    unsigned char* dst = nullptr;
    size_t dst_stride = 0;
    size_t bytes = 0;
};

// Bytes [from, from + n) of part p's row o.
inline void copy_row_piece(const RowPartCopy& p, size_t o, size_t from, size_t n) {
    std::memcpy(p.dst + o * p.dst_stride + from, p.src + o * p.src_stride + from, n);
}

// The pieces of row o that lie in the whole row's bytes [at, stop).
inline void copy_row_span(const std::vector<RowPartCopy>& parts, size_t o, size_t at, size_t stop) {
    size_t start = 0;   // byte of the whole row where part k starts
    for (size_t k = 0; k < parts.size() && start < stop; ++k) {
        const size_t lo = std::max(start, at), hi = std::min(start + parts[k].bytes, stop);
        if (lo < hi) copy_row_piece(parts[k], o, lo - start, hi - lo);
        start += parts[k].bytes;
    }
}

// Every byte of the parts' `outer` rows, once. A chunk's whole rows go part
// by part (each part's rows in order: a tight loop of one size, as the
// reference copies); the rows cut by the chunk's ends go piece by piece. The
// caller has checked that outer times the whole row's bytes fits a size_t.
inline void copy_row_parts(const CpuThreads& threads, size_t outer, const std::vector<RowPartCopy>& parts) {
    size_t row = 0;
    for (const RowPartCopy& p : parts) row += p.bytes;
    if (row == 0 || outer == 0) return;
    parallel_for(threads, outer * row, kRowPartsGrainBytes, [&](size_t begin, size_t end) {
        size_t first = begin / row;
        const size_t last = end / row;   // whole rows [first, last) once the ends are cut
        if (begin % row != 0) {
            copy_row_span(parts, first, begin % row, first == last ? end % row : row);
            ++first;
        }
        for (const RowPartCopy& p : parts) {
            const RowPartCopy local = p;   // no aliasing with the copies: the loop keeps it in registers
            if (local.bytes == 0) continue;
            for (size_t o = first; o < last; ++o)
                std::memcpy(local.dst + o * local.dst_stride, local.src + o * local.src_stride, local.bytes);
        }
        if (end % row != 0 && last >= first) copy_row_span(parts, last, 0, end % row);
    });
}

}   // namespace dynrt
