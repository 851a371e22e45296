// prefetch_line_after(): a write hint for the cache line after an append
// buffer's tail.
//
// Why: a buffer that many others are appended to in turn (a wheel's bucket
// arrays, the engine calendar's buckets) gets a new tail line only every few
// appends, long apart, and each new line was a store miss that held up every
// store behind it until its read-for-ownership came back. Fetching the next
// line at each append has it in the cache when a later append reaches it.
//
// The address is computed as an integer, not as a pointer past the buffer
// (undefined behaviour even if never dereferenced): the line may lie beyond
// the allocation, where a prefetch changes nothing and cannot fault.
#pragma once

#include <cstdint>

namespace timersim {

inline constexpr std::uintptr_t kCacheLine = 64;

[[gnu::always_inline]] inline void prefetch_line_after(const void* tail) noexcept {
    __builtin_prefetch(reinterpret_cast<const void*>(reinterpret_cast<std::uintptr_t>(tail) + kCacheLine), 1);
}

} // namespace timersim
