// RingFifo<T>: a first-in first-out queue whose elements are numbered by
// ever-increasing sequence numbers (the first pushed is 0), kept in a ring
// that doubles when full and never shrinks, so a steady state allocates
// nothing (a std::deque of large elements allocates a block every few).
// Growing moves the elements: a pointer into the queue lasts until the
// next push.
//
//   RingFifo<Event> window;
//   const std::uint64_t seq = window.tail();
//   window.push_back() = event;      // window.at(seq) is it, until popped
//   while (!window.empty()) use(window.front()), window.pop_front();
#pragma once

#include <cstdint>
#include <vector>

namespace timersim {

template <class T>
class RingFifo {
public:
    bool empty() const noexcept { return head_ == tail_; }
    std::size_t size() const noexcept { return tail_ - head_; }
    // The sequence numbers of the front and one past the back.
    std::uint64_t head() const noexcept { return head_; }
    std::uint64_t tail() const noexcept { return tail_; }
    // By sequence number (head() <= seq < tail()).
    T& at(std::uint64_t seq) noexcept { return ring_[seq & (ring_.size() - 1)]; }
    const T& at(std::uint64_t seq) const noexcept { return ring_[seq & (ring_.size() - 1)]; }
    // By place from the front.
    T& operator[](std::size_t i) noexcept { return at(head_ + i); }
    const T& operator[](std::size_t i) const noexcept { return at(head_ + i); }
    T& front() noexcept { return at(head_); }
    const T& front() const noexcept { return at(head_); }
    const T& back() const noexcept { return at(tail_ - 1); }
    void pop_front() noexcept { ++head_; }
    // A new element at the back, value-initialised.
    T& push_back() {
        if (size() == ring_.size()) grow();
        T& e = at(tail_++);
        e = T{};
        return e;
    }

private:
    void grow() {
        std::vector<T> bigger(ring_.empty() ? 64 : ring_.size() * 2);
        for (std::uint64_t n = head_; n != tail_; ++n) bigger[n & (bigger.size() - 1)] = at(n);
        ring_.swap(bigger);
    }
    std::vector<T> ring_;
    std::uint64_t head_ = 0;
    std::uint64_t tail_ = 0;
};

} // namespace timersim
