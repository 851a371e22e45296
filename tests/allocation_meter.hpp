// How many bytes the program has allocated, now and at its peak since a
// mark: a test allocator for tests that bound memory by counting (never by
// timing or by the resident set). Every allocation is seen, whatever makes
// it: operator new, malloc, aligned_alloc (the trace chunks' huge-page
// blocks), a library's own calls.
//
//   allocation_meter::mark();            // the peak starts from now
//   ... run something ...
//   const std::size_t grew = allocation_meter::peak_since_mark();
//
// Include it in one source file of a test executable only: it defines the
// C allocator's entry points. A plain build interposes malloc and its
// kin over glibc's (__libc_malloc and the rest do the work); under
// AddressSanitizer, which owns malloc, it installs ASan's malloc and free
// hooks instead. Sizes are malloc_usable_size() in the first case and the
// requested sizes in the second: a test compares two measurements of one
// build, never a figure across builds.
#pragma once

#include <atomic>
#include <cstddef>

namespace allocation_meter {

inline std::atomic<std::size_t> current{0};
inline std::atomic<std::size_t> peak{0};
inline std::atomic<std::size_t> base{0};

inline void add(std::size_t n) noexcept {
    const std::size_t now = current.fetch_add(n, std::memory_order_relaxed) + n;
    std::size_t p = peak.load(std::memory_order_relaxed);
    while (now > p && !peak.compare_exchange_weak(p, now, std::memory_order_relaxed)) {}
}
inline void sub(std::size_t n) noexcept { current.fetch_sub(n, std::memory_order_relaxed); }

// The peak starts again from what is allocated now.
inline void mark() noexcept {
    const std::size_t now = current.load(std::memory_order_relaxed);
    base.store(now, std::memory_order_relaxed);
    peak.store(now, std::memory_order_relaxed);
}
// The most allocated since mark(), over what was allocated at mark().
inline std::size_t peak_since_mark() noexcept {
    const std::size_t p = peak.load(std::memory_order_relaxed), b = base.load(std::memory_order_relaxed);
    return p > b ? p - b : 0;
}

} // namespace allocation_meter

#if defined(__SANITIZE_ADDRESS__)

extern "C" int __sanitizer_install_malloc_and_free_hooks(void (*malloc_hook)(const volatile void*, std::size_t),
                                                         void (*free_hook)(const volatile void*));
extern "C" std::size_t __sanitizer_get_allocated_size(const volatile void* p);

namespace allocation_meter {
inline void on_malloc(const volatile void*, std::size_t n) { add(n); }
// Called before the block is let go, while its size can still be asked.
inline void on_free(const volatile void* p) {
    if (p) sub(__sanitizer_get_allocated_size(p));
}
inline const int hooks_installed = __sanitizer_install_malloc_and_free_hooks(on_malloc, on_free);
} // namespace allocation_meter

#else

#include <malloc.h>

#include <cerrno>
#include <cstring>

extern "C" {
void* __libc_malloc(std::size_t);
void* __libc_calloc(std::size_t, std::size_t);
void* __libc_realloc(void*, std::size_t);
void* __libc_memalign(std::size_t, std::size_t);
void __libc_free(void*);
}

namespace allocation_meter {
inline void* counted(void* p) noexcept {
    if (p) add(malloc_usable_size(p));
    return p;
}
} // namespace allocation_meter

extern "C" {
using allocation_meter::counted;

void* malloc(std::size_t n) noexcept { return counted(__libc_malloc(n)); }
void* calloc(std::size_t k, std::size_t n) noexcept { return counted(__libc_calloc(k, n)); }
void free(void* p) noexcept {
    if (!p) return;
    allocation_meter::sub(malloc_usable_size(p));
    __libc_free(p);
}
void* realloc(void* p, std::size_t n) noexcept {
    const std::size_t before = p ? malloc_usable_size(p) : 0;
    void* q = __libc_realloc(p, n);
    if (!q) {
        if (p && n == 0) allocation_meter::sub(before); // glibc freed p
        return q;                                       // else p is unchanged
    }
    allocation_meter::sub(before);
    return counted(q);
}
void* memalign(std::size_t alignment, std::size_t n) noexcept { return counted(__libc_memalign(alignment, n)); }
void* aligned_alloc(std::size_t alignment, std::size_t n) noexcept { return counted(__libc_memalign(alignment, n)); }
int posix_memalign(void** out, std::size_t alignment, std::size_t n) noexcept {
    if (alignment % sizeof(void*) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void* p = counted(__libc_memalign(alignment, n));
    if (!p) return ENOMEM;
    *out = p;
    return 0;
}
}

#endif
