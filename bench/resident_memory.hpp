// Resident memory of this process, from /proc/self/statm: what the
// bytes-per-timer benchmark measures around filling a queue.
#pragma once

#include <cstddef>

namespace timersim::bench {

// Resident set size in bytes, after handing free heap memory back to the
// kernel (malloc_trim), so that memory the allocator merely kept from earlier
// benchmarks (or from a vector's earlier, smaller buffers) is not counted.
// 0 if /proc/self/statm cannot be read.
std::size_t resident_bytes();

} // namespace timersim::bench
