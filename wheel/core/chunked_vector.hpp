// ChunkedVector<T>: a sequence that grows by whole chunks of 2^kShift
// elements and never moves what it holds. For the long lists a trace's load
// builds (a kernel trace's fires: millions of 72-byte entries): a
// std::vector grows by copying into twice the room, so for a moment it
// takes three times what it holds and then up to twice; this takes what it
// holds plus the untouched rest of one chunk. Elements are constructed as
// they are pushed, so a chunk's pages cost memory only once written. Give
// a long list chunks of 32 MiB or more (KernelFires: 2^19 fires, 36 MiB):
// glibc maps an allocation that large on its own whatever its dynamic mmap
// threshold has become, and gives it back to the system when freed; smaller
// chunks may come from the heap, and freed there stay resident under the
// allocations of other threads' arenas (compare's replays).
//
//   ChunkedVector<KernelFire> fires;
//   fires.push_back(f);            // references to earlier elements stay valid
//   fires[i].set_callback_ns(..);
//   for (const KernelFire& f : fires) ...
#pragma once

#include <cstddef>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <utility>
#include <vector>

namespace timersim {

template <typename T, unsigned kShift = 16>
class ChunkedVector {
    static constexpr std::size_t kChunk = std::size_t{1} << kShift;

public:
    ChunkedVector() = default;
    explicit ChunkedVector(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) push_back(T{});
    }
    ChunkedVector(std::initializer_list<T> items) {
        for (const T& t : items) push_back(t);
    }
    ChunkedVector(ChunkedVector&& other) noexcept
        : chunks_(std::move(other.chunks_)), size_(std::exchange(other.size_, 0)) {}
    ChunkedVector& operator=(ChunkedVector&& other) noexcept {
        if (this != &other) {
            release();
            chunks_ = std::move(other.chunks_);
            size_ = std::exchange(other.size_, 0);
        }
        return *this;
    }
    ChunkedVector(const ChunkedVector& other) {
        for (const T& t : other) push_back(t);
    }
    ChunkedVector& operator=(const ChunkedVector& other) {
        if (this != &other) *this = ChunkedVector(other);
        return *this;
    }
    ~ChunkedVector() { release(); }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    T& operator[](std::size_t i) noexcept { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    const T& operator[](std::size_t i) const noexcept { return chunks_[i >> kShift][i & (kChunk - 1)]; }
    T& back() noexcept { return (*this)[size_ - 1]; }

    void push_back(const T& t) {
        if ((size_ & (kChunk - 1)) == 0 && size_ >> kShift == chunks_.size()) {
            chunks_.reserve(chunks_.size() + 1); // first: nothing to undo if the chunk's allocation throws
            chunks_.push_back(std::allocator<T>{}.allocate(kChunk));
        }
        ::new (static_cast<void*>(&(*this)[size_])) T(t);
        ++size_;
    }

    template <typename Self, typename Value>
    class Iterator {
    public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = Value*;
        using reference = Value&;
        Iterator() = default;
        Iterator(Self* v, std::size_t i) : v_(v), i_(i) {}
        reference operator*() const noexcept { return (*v_)[i_]; }
        pointer operator->() const noexcept { return &(*v_)[i_]; }
        Iterator& operator++() noexcept {
            ++i_;
            return *this;
        }
        Iterator operator++(int) noexcept {
            Iterator before = *this;
            ++i_;
            return before;
        }
        friend bool operator==(const Iterator& a, const Iterator& b) noexcept { return a.i_ == b.i_; }

    private:
        Self* v_ = nullptr;
        std::size_t i_ = 0;
    };
    using iterator = Iterator<ChunkedVector, T>;
    using const_iterator = Iterator<const ChunkedVector, const T>;
    iterator begin() noexcept { return {this, 0}; }
    iterator end() noexcept { return {this, size_}; }
    const_iterator begin() const noexcept { return {this, 0}; }
    const_iterator end() const noexcept { return {this, size_}; }

private:
    void release() noexcept {
        for (std::size_t i = 0; i < size_; ++i) (*this)[i].~T();
        for (T* chunk : chunks_) std::allocator<T>{}.deallocate(chunk, kChunk);
        chunks_.clear();
        size_ = 0;
    }

    std::vector<T*> chunks_; // raw storage: element i is constructed for i < size_
    std::size_t size_ = 0;
};

} // namespace timersim
