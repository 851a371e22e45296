// SpilledChunks<T>: a long list built once in order (a kernel trace's fires,
// KernelFires) whose whole is read again only from the start. It grows by
// chunks of 2^chunk_shift elements that never move (no copy into twice the
// room as a vector grows); past `resident` chunks in memory, the oldest ones the builder says it will
// not change again are written to an unlinked temporary file
// (open_temporary_file()) and freed, and iteration reads them back a chunk
// at a time. A 10 GB trace's 11M fires (72 bytes each) would otherwise be
// 800 MB in memory through its load; spilled, they are a few chunks.
//
//   KernelFires fires;                 // chunks of 2^17 (9 MiB), two kept in memory
//   fires.push_back(f);
//   fires[i].set_callback_ns(..);      // i not yet spilled (std::logic_error otherwise)
//   fires.spill_before(oldest_open, name); // chunks wholly before it may go to the file
//   fires.update_sorted(changes.begin(), changes.end(), fn); // (index, what) pairs, spilled or not
//   for (const KernelFire& f : fires) ...  // spilled chunks read back in order
//
// Elements are copied as bytes: T is trivially copyable. A file that cannot
// be made, written or read throws InputError naming `name`
// (throw_temporary_file_error()).
#pragma once

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <iterator>
#include <memory>
#include <new>
#include <stdexcept>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

namespace timersim {

namespace spill_io {
// The unlinked file's descriptor (InputError if none can be made).
int open(const std::string& name);
void write_at(int fd, std::uint64_t offset, const void* bytes, std::size_t n, const std::string& name);
void read_at(int fd, std::uint64_t offset, void* bytes, std::size_t n, const std::string& name);
void close(int fd) noexcept;
} // namespace spill_io

template <typename T>
class SpilledChunks {
    static_assert(std::is_trivially_copyable_v<T> && std::is_trivially_destructible_v<T>);

public:
    static constexpr unsigned kDefaultShift = 17;
    static constexpr std::size_t kDefaultResident = 2;

    SpilledChunks() = default;
    // Chunks of 2^shift elements, at most `resident` (at least 1) of them
    // in memory once spilling starts.
    static SpilledChunks with_chunks(unsigned shift, std::size_t resident) {
        SpilledChunks s;
        s.shift_ = shift;
        s.resident_ = resident ? resident : 1;
        return s;
    }
    explicit SpilledChunks(std::size_t n) {
        for (std::size_t i = 0; i < n; ++i) push_back(T{});
    }
    SpilledChunks(std::initializer_list<T> items) {
        for (const T& t : items) push_back(t);
    }
    SpilledChunks(SpilledChunks&& o) noexcept { take(o); }
    SpilledChunks& operator=(SpilledChunks&& o) noexcept {
        if (this != &o) {
            release();
            take(o);
        }
        return *this;
    }
    SpilledChunks(const SpilledChunks&) = delete;
    SpilledChunks& operator=(const SpilledChunks&) = delete;
    ~SpilledChunks() { release(); }

    std::size_t size() const noexcept { return size_; }
    bool empty() const noexcept { return size_ == 0; }
    // Elements in the file.
    std::size_t spilled() const noexcept { return first_resident_ << shift_; }

    void push_back(const T& t) {
        if ((size_ & mask()) == 0 && (size_ >> shift_) == chunks_.size()) {
            chunks_.reserve(chunks_.size() + 1); // first: nothing to undo if the allocation throws
            chunks_.push_back(std::allocator<T>{}.allocate(chunk()));
        }
        ::new (static_cast<void*>(slot(size_))) T(t);
        ++size_;
    }
    T& operator[](std::size_t i) { return *resident(i); }
    const T& operator[](std::size_t i) const { return *resident(i); }

    // The chunks wholly before element `keep_from` will not change: while
    // more than `resident` chunks are in memory, write the oldest of them
    // to the file and free it.
    void spill_before(std::size_t keep_from, const std::string& name) {
        const std::size_t limit = std::min(keep_from, size_) >> shift_;
        while (first_resident_ < limit && chunks_.size() - first_resident_ > resident_) {
            if (fd_ < 0) fd_ = spill_io::open(name);
            name_ = name;
            T*& c = chunks_[first_resident_];
            spill_io::write_at(fd_, offset_of(first_resident_), c, chunk() * sizeof(T), name);
            std::allocator<T>{}.deallocate(c, chunk());
            c = nullptr;
            ++first_resident_;
        }
    }
    // Changes elements wherever they are: for each item of [first, last),
    // ascending by item.first (an element's index), fn(element, item), in
    // memory or on a copy of its chunk read from the file and written back.
    template <typename It, typename F>
    void update_sorted(It first, It last, F&& fn) {
        std::vector<T> buffer;
        while (first != last) {
            const std::size_t c = first->first >> shift_;
            if (c >= first_resident_) {
                fn((*this)[first->first], *first);
                ++first;
                continue;
            }
            buffer.resize(chunk());
            spill_io::read_at(fd_, offset_of(c), buffer.data(), chunk() * sizeof(T), name_);
            for (; first != last && (first->first >> shift_) == c; ++first) fn(buffer[first->first & mask()], *first);
            spill_io::write_at(fd_, offset_of(c), buffer.data(), chunk() * sizeof(T), name_);
        }
    }

    class const_iterator {
    public:
        using iterator_category = std::input_iterator_tag;
        using value_type = T;
        using difference_type = std::ptrdiff_t;
        using pointer = const T*;
        using reference = const T&;
        const_iterator() = default;
        const_iterator(const SpilledChunks* s, std::size_t i) : s_(s), i_(i) {}
        reference operator*() const { return *at(); }
        pointer operator->() const { return at(); }
        const_iterator& operator++() noexcept {
            ++i_;
            return *this;
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) noexcept { return a.i_ == b.i_; }

    private:
        const T* at() const {
            const std::size_t c = i_ >> s_->shift_;
            if (c >= s_->first_resident_) return s_->slot(i_);
            if (!buffer_) buffer_ = std::make_shared<std::vector<T>>(s_->chunk());
            if (buffered_ != c) {
                spill_io::read_at(s_->fd_, s_->offset_of(c), buffer_->data(), s_->chunk() * sizeof(T), s_->name_);
                buffered_ = c;
            }
            return &(*buffer_)[i_ & s_->mask()];
        }
        const SpilledChunks* s_ = nullptr;
        std::size_t i_ = 0;
        // The spilled chunk read back last (shared by copies of the iterator).
        mutable std::shared_ptr<std::vector<T>> buffer_;
        mutable std::size_t buffered_ = SIZE_MAX;
    };
    const_iterator begin() const noexcept { return {this, 0}; }
    const_iterator end() const noexcept { return {this, size_}; }

private:
    std::size_t chunk() const noexcept { return std::size_t{1} << shift_; }
    std::size_t mask() const noexcept { return chunk() - 1; }
    std::uint64_t offset_of(std::size_t c) const noexcept { return std::uint64_t{c} * chunk() * sizeof(T); }
    T* slot(std::size_t i) const noexcept { return chunks_[i >> shift_] + (i & mask()); }
    T* resident(std::size_t i) const {
        if ((i >> shift_) < first_resident_) throw std::logic_error("SpilledChunks: element already spilled");
        return slot(i);
    }
    void take(SpilledChunks& o) noexcept {
        chunks_ = std::move(o.chunks_);
        size_ = std::exchange(o.size_, 0);
        first_resident_ = std::exchange(o.first_resident_, 0);
        fd_ = std::exchange(o.fd_, -1);
        shift_ = o.shift_;
        resident_ = o.resident_;
        name_ = std::move(o.name_);
    }
    void release() noexcept {
        for (std::size_t c = first_resident_; c < chunks_.size(); ++c) std::allocator<T>{}.deallocate(chunks_[c], chunk());
        chunks_.clear();
        size_ = 0;
        first_resident_ = 0;
        if (fd_ >= 0) spill_io::close(std::exchange(fd_, -1));
    }

    std::vector<T*> chunks_; // raw storage, null once spilled: element i is constructed for i < size_
    std::size_t size_ = 0;
    std::size_t first_resident_ = 0; // chunks before it are in the file, chunk c at offset_of(c)
    int fd_ = -1;
    unsigned shift_ = kDefaultShift;
    std::size_t resident_ = kDefaultResident;
    std::string name_; // the input, for a read error
};

} // namespace timersim
