// EventQueue: pending events of the discrete-event engine, ordered by
// (time, insertion sequence). Two events at the same nanosecond come out in
// the order they were scheduled, so a run never depends on the queue's
// internals: the same inputs give the same event order on every platform.
//
// Usage:
//
//     EventQueue<Action> q;
//     q.push(2'000, a);               // any time, also one before the last pop
//     q.push(1'000, b);
//     q.pop().payload;                // b, then a
//
// Why not one binary heap: a generator keeps one pending action per
// connection, so at 1M connections a heap of 1M 48-byte events pays about
// twenty levels of cache misses on every pop (two thirds of a run's time at
// 1M pending). This is a calendar queue (Brown, CACM 1988) with a binary heap
// for the near future:
//
//   near_      every event up to near_last_: the current bucket, sorted
//              (run_, taken in order, so the next events can be looked at
//              ahead: peek()), and a binary heap of events scheduled into
//              that range since (late_). Never empty unless the whole queue is.
//   buckets_   the current epoch, (near_last_, epoch_last_]: bucket i holds the
//              events of [base_ + i * 2^shift_, base_ + (i+1) * 2^shift_),
//              unsorted; when near_ runs empty the next non-empty bucket
//              is sorted and becomes near_ (a few hundred events, in cache).
//   overflow_  events after epoch_last_, unsorted. When the buckets are
//              used up, a new epoch is laid over overflow_ from its earliest
//              event (start_epoch() says how wide its buckets are).
//
// The sides are split by time alone (near_ <= near_last_ < buckets_ <=
// epoch_last_ < overflow_), so events at one time are always on one side
// and near_'s order is the order of the whole queue. With at most kSmall
// events everything is near (near_last_ = UINT64_MAX), as in one heap.
//
// Cost: push O(1) (an append to a bucket or to overflow_), pop O(1) from the
// sorted run (O(log) from late_), a counting sort per bucket, plus two passes
// over overflow_ per epoch (its bounds, then the split); a few cache lines per
// event instead of log2(N). tests/machine/test_event_queue.cpp
// checks every pop against the binary heap.
#pragma once

#include "wheel/core/prefetch.hpp"
#include "wheel/core/timer_pool.hpp"

#include <algorithm>
#include <bit>
#include <cstdint>
#include <utility>
#include <vector>

namespace timersim {

template <class Payload>
class EventQueue {
public:
    // No sequence number: events reach a bucket in push order and every
    // sort of one is stable, so ties keep push order without one (24 bytes
    // an event with a 16-byte payload, not 32). Only late_ needs one.
    struct Event {
        std::uint64_t time_ns;
        Payload payload;
    };
    // Event buffers. A buffer of 2 MiB and more (overflow_ and the run at a
    // million events) gets huge pages (wheel/core/timer_pool.hpp): filling a new
    // one was otherwise a page fault every 170 events, and at 1M connections
    // overflow_'s growth at start-up was half of a run's page faults.
    using Events = HugePageVector<Event>;

    EventQueue() = default;
    // run_next_ and run_end_ point into run_'s buffer, which a move hands
    // over and a copy would not: moves only (a moved-from queue can only be
    // destroyed or assigned to).
    EventQueue(EventQueue&&) noexcept = default;
    EventQueue& operator=(EventQueue&&) noexcept = default;
    EventQueue(const EventQueue&) = delete;
    EventQueue& operator=(const EventQueue&) = delete;

    void reserve(std::size_t n) { late_.reserve(std::min<std::size_t>(n, kSmall * 2)); }
    // The common case first, a few instructions: an append to a bucket or
    // to overflow_ (one counter for the bookkeeping: pushes_).
    void push(std::uint64_t time_ns, const Payload& payload) {
        ++pushes_;
        if (time_ns > near_last_) [[likely]] {
            append(time_ns <= epoch_last_ ? buckets_[(time_ns - base_) >> shift_] : overflow_, Event{time_ns, payload});
            return;
        }
        push_late(Event{time_ns, payload});
    }
    bool empty() const noexcept { return pushes_ == pops_; }
    std::size_t size() const noexcept { return pushes_ - pops_; }
    const Event& top() const { return late_first() ? late_.front().event : *run_next_; }
    // Time of the earliest event; UINT64_MAX when empty. Called for every
    // event the engine handles: a few instructions, no call (a call made
    // the engine's caller save four registers). run_next_ always points to
    // an event, kNone (UINT64_MAX) when run_ is used up.
    std::uint64_t next_time() const noexcept {
        const std::uint64_t t = run_next_->time_ns;
        return late_.empty() ? t : std::min(t, late_.front().event.time_ns);
    }
    // The common case first: late_ empty, run_'s next is the earliest.
    Event pop() {
        ++pops_;
        if (late_.empty()) [[likely]] {
            const Event* const next = run_next_++;
            if (run_next_ != run_end_) [[likely]] return *next;
            const Event e = *next; // before refill() overwrites run_
            refill();
            return e;
        }
        return pop_near();
    }
    // A look ahead, for prefetching: the event k places after top() in the
    // current bucket's order, or nullptr past its end. Events scheduled since
    // the bucket was taken may come before it: a hint, not the order.
    const Event* peek(std::size_t k) const noexcept {
        return k < static_cast<std::size_t>(run_end_ - run_next_) ? run_next_ + k : nullptr;
    }
    // Epochs laid out over buckets so far (each costs passes over every
    // event outside near_): for tests that keep that work bounded.
    std::size_t epochs_laid_out() const noexcept { return epochs_laid_out_; }

private:
    static constexpr std::size_t kSmall = 256;        // at most this many: one heap
    static constexpr std::size_t kLargeHeap = 4096;   // one heap beyond this: buckets
    static constexpr std::size_t kPerBucket = 32;     // an epoch's events per bucket where densest
    static constexpr std::size_t kSample = 4096;      // times sampled to lay out an epoch
    static constexpr std::size_t kSortDirectly = 32;  // a bucket this small: an insertion sort alone
    static constexpr std::uint32_t kSmooth = 4;       // reserve_buckets() averages over 2 kSmooth + 1 buckets
    static constexpr std::size_t kMovesPerEvent = 4;  // more in sort_bucket()'s insertion pass: a comparison sort
    // At most this many buckets: their heads and tails stay in the cache, so
    // a push costs no miss. With a comparison sort per bucket 4096 was best
    // (1M events of timersim run: 210 ns per pop and push, 65536: 260-340,
    // 2048: 250-370); with sort_bucket() linear, larger buckets cost no more
    // to sort, and 1024 ran uniform at 1M connections in 0.91x the time of
    // 4096 and the demo's workloads in 0.88x (16384: 1.52x).
    static constexpr std::size_t kMaxBuckets = std::size_t{1} << 10;

    // An event of late_: scheduled into near_ after its bucket was sorted,
    // so after every event of run_; seq orders late_'s own ties.
    struct Late {
        Event event;
        std::uint64_t seq;
    };
    struct Later {
        bool operator()(const Late& a, const Late& b) const noexcept {
            return a.event.time_ns != b.event.time_ns ? a.event.time_ns > b.event.time_ns : a.seq > b.seq;
        }
    };
    // The order of a run: by time alone, the sorts being stable.
    static bool earlier(const Event& a, const Event& b) noexcept { return a.time_ns < b.time_ns; }

    // Insertion sort, stable: the last pass of sort_bucket(), and the whole
    // sort of a small bucket. Gives up (false) past `moves` moves, leaving
    // the events permuted, ties still in their order.
    static bool insertion_sort(Event* first, std::size_t n, std::size_t moves) noexcept {
        for (std::size_t i = 1; i < n; ++i) {
            if (!earlier(first[i], first[i - 1])) [[likely]] continue;
            const Event e = first[i];
            std::size_t j = i;
            do {
                first[j] = first[j - 1];
            } while (--j > 0 && earlier(e, first[j - 1]));
            first[j] = e;
            const std::size_t moved = i - j;
            if (moved > moves) return false;
            moves -= moved;
        }
        return true;
    }

    // v.push_back(e), the growth out of line: inlined, it made every push
    // save and restore six registers.
    // With a thousand buckets, each append also fetches the line after the
    // bucket's tail (wheel/core/prefetch.hpp).
    static void append(Events& v, const Event& e) {
        if (v.size() != v.capacity()) [[likely]] {
            v.push_back(e);
            prefetch_line_after(v.data() + v.size());
        } else {
            append_growing(v, e);
        }
    }
    [[gnu::noinline]] static void append_growing(Events& v, const Event& e) { v.push_back(e); }

    // An event into near_'s range: into late_. Out of line, as the growth
    // in append().
    [[gnu::noinline]] void push_late(const Event& e) {
        if (late_.empty() && append_to_run(e)) return;
        late_.push_back(Late{e, pushes_});
        std::push_heap(late_.begin(), late_.end(), Later{});
        // Everything near and a large heap: lay an epoch over it.
        if (near_last_ == UINT64_MAX && late_.size() > kLargeHeap) spread_near();
    }

    // With late_ empty, an event no earlier than run_'s last comes after
    // every pending event (ties keep push order), so it can join the end of
    // the run instead of the heap, if the run's buffer has room. A queue
    // that holds one or two events, each pushed after the last (a trace
    // replay reading one step ahead), then never touches the heap.
    bool append_to_run(const Event& e) {
        if (run_next_ == run_end_) { // used up: both &kNone
            if (run_.empty()) run_.resize(kSortDirectly);
            run_[0] = e;
            run_next_ = run_.data();
            run_end_ = run_next_ + 1;
            return true;
        }
        const std::size_t used = static_cast<std::size_t>(run_end_ - run_.data());
        if (used == run_.size() || earlier(e, run_end_[-1])) return false;
        run_[used] = e;
        ++run_end_;
        return true;
    }

    // pop() with late_ not empty: the earlier of its first and run_'s next.
    // Out of line: inlined, its heap made every pop save six registers.
    [[gnu::noinline]] Event pop_near() {
        Event e;
        if (late_first()) {
            std::pop_heap(late_.begin(), late_.end(), Later{});
            e = late_.back().event;
            late_.pop_back();
        } else {
            e = *run_next_++;
        }
        if (run_next_ == run_end_) {
            if (late_.empty()) refill();
            else run_next_ = run_end_ = &kNone;
        }
        return e;
    }

    std::size_t ops_since_epoch() const noexcept { return pushes_ + pops_ - ops_at_epoch_; }

    // The last ns of the first n buckets (UINT64_MAX if they reach past it).
    static std::uint64_t last_of(std::uint64_t base, std::size_t n, unsigned shift) noexcept {
        const unsigned __int128 end = static_cast<unsigned __int128>(base) + (static_cast<unsigned __int128>(n) << shift);
        return end > UINT64_MAX ? UINT64_MAX : static_cast<std::uint64_t>(end - 1);
    }

    // near_ is empty: the next bucket, or a new epoch, becomes near_.
    void refill() {
        run_next_ = run_end_ = &kNone;
        if (empty()) {
            near_last_ = epoch_last_ = UINT64_MAX;
            return;
        }
        // The next bucket with events, else a new epoch (its bucket 0 holds
        // the earliest event).
        while (next_ < used_ && buckets_[next_].empty()) ++next_;
        if (next_ == used_ && !start_epoch()) return;
        // Many more events than an epoch's bucket should hold (the queue grew
        // after the epoch was laid out): a new epoch, if enough has happened
        // since the last one to pay for it.
        if (buckets_[next_].size() > crowded_ && ops_since_epoch() >= size_at_epoch_) respread();
        Events& b = buckets_[next_];
        sort_bucket(b, base_ + (std::uint64_t{next_} << shift_));
        Events().swap(b); // a used bucket gets no more events
        ++next_;
        near_last_ = last_of(base_, next_, shift_);
    }

    // near_'s run = bucket b's events (all in [start, start + 2^shift_)),
    // sorted, in run_ (which only grows: resize() would zero what the sort
    // overwrites). A comparison sort of a few hundred random events
    // mispredicts about half of its compares. Instead a counting pass splits
    // the bucket into sub-buckets of half an event each on average (stable,
    // so each keeps push order), and one insertion pass puts the rare
    // neighbours that share a sub-bucket in order: the same sorted run.
    // (uniform at 1M connections: 0.91x the run's CPU time.)
    void sort_bucket(const Events& b, std::uint64_t start) {
        const std::size_t n = b.size();
        if (run_.size() < n) run_.resize(n);
        Event* const out = run_.data();
        run_next_ = out;
        run_end_ = out + n;
        if (n <= kSortDirectly) {
            std::copy(b.begin(), b.end(), out);
            insertion_sort(out, n, n * n);
            return;
        }
        // 2^bits sub-buckets, at least twice as many as events, at most the
        // width in ns. (At least as many as events saved 6 instructions an
        // event, and ran 3% slower: the insertion pass mispredicts more.)
        const unsigned bits = std::min<unsigned>(static_cast<unsigned>(std::bit_width(n - 1)) + 1, shift_);
        const unsigned sub_shift = shift_ - bits;
        counts_.assign((std::size_t{1} << bits) + 1, 0);
        for (const Event& e : b) ++counts_[((e.time_ns - start) >> sub_shift) + 1];
        for (std::size_t i = 1; i < counts_.size(); ++i) counts_[i] += counts_[i - 1];
        for (const Event& e : b) out[counts_[(e.time_ns - start) >> sub_shift]++] = e;
        // Many events of different times in one sub-bucket would make the
        // insertion pass quadratic: past kMovesPerEvent moves an event on
        // average, a comparison sort (stable, and the run so far still has
        // ties in push order).
        if (!insertion_sort(out, n, n * kMovesPerEvent)) std::stable_sort(out, out + n, earlier);
    }

    // The buckets are empty and so is near_: lay a new epoch over overflow_
    // (true), or make it near_ if it is small (false). The buckets' width
    // follows the density of the earliest events (about kPerBucket in a
    // bucket there), widened until the epoch holds at least half of the
    // events in at most one bucket per two events; the rest stays in
    // overflow_ for a later epoch.
    bool start_epoch() {
        const std::size_t n = overflow_.size();
        size_at_epoch_ = n;
        ops_at_epoch_ = pushes_ + pops_;
        if (n <= kSmall) {
            run_.swap(overflow_);
            overflow_.clear();
            std::stable_sort(run_.begin(), run_.end(), earlier);
            run_next_ = run_.data();
            run_end_ = run_next_ + n;
            near_last_ = epoch_last_ = UINT64_MAX;
            used_ = next_ = 0;
            return false;
        }
        // The earliest and latest exactly (bucket 0 starts at the earliest);
        // the 1/16 and 1/2 quantiles from an even sample of the times: the
        // layout only has to be about right (the order never depends on it),
        // and two nth_element passes over a million events cost more than
        // the epoch's sorts.
        std::uint64_t lo = UINT64_MAX, hi = 0;
        for (const Event& e : overflow_) {
            lo = std::min(lo, e.time_ns);
            hi = std::max(hi, e.time_ns);
        }
        const std::size_t stride = std::max<std::size_t>(1, n / kSample);
        sample_.clear();
        for (std::size_t i = 0; i < n; i += stride) sample_.push_back(overflow_[i].time_ns);
        const std::size_t m = sample_.size();
        const auto mid = sample_.begin() + static_cast<std::ptrdiff_t>(m / 2);
        std::nth_element(sample_.begin(), mid, sample_.end());
        const auto kth = sample_.begin() + static_cast<std::ptrdiff_t>(m / 16);
        std::nth_element(sample_.begin(), kth, mid);
        const std::uint64_t gap = (*kth - lo) / (n / 16);
        const std::uint64_t dense = gap > UINT64_MAX / kPerBucket ? UINT64_MAX : gap * kPerBucket;
        const auto cap = static_cast<std::uint32_t>(std::min(std::bit_ceil(n) / 2, kMaxBuckets)); // >= 256
        const unsigned by_density = dense > 1 ? static_cast<unsigned>(std::bit_width(dense) - 1) : 0;
        const auto by_median = static_cast<unsigned>(std::bit_width((*mid - lo) / cap));
        shift_ = std::max(by_density, by_median); // <= 63
        used_ = static_cast<std::uint32_t>(std::min<std::uint64_t>(cap, ((hi - lo) >> shift_) + 1));
        base_ = lo;
        epoch_last_ = last_of(lo, used_, shift_);
        if (buckets_.size() < used_) buckets_.resize(used_);
        reserve_buckets(stride);
        std::size_t kept = 0;
        for (const Event& e : overflow_) {
            if (e.time_ns <= epoch_last_) buckets_[(e.time_ns - base_) >> shift_].push_back(e);
            else overflow_[kept++] = e;
        }
        overflow_.resize(kept);
        ++epochs_laid_out_;
        // Crowded, for refill(): 16 times the layout's own mean. Against a
        // fixed 16 kPerBucket, an epoch of 1M events in 1024 buckets (about
        // 650 each where the median puts them) was laid out again half-way
        // through every time (uniform at 1M connections: 21 of 25 epochs).
        crowded_ = 16 * std::max(kPerBucket, (n - kept) / used_ + 1);
        next_ = 0;
        return true;
    }

    // Each bucket's buffer reserved for about its share of overflow_, as
    // the sample has it (hits times the stride, averaged over 2 kSmooth + 1
    // neighbours against the sample's noise): start_epoch() then grows few
    // buffers, instead of each from empty doubling by doubling.
    void reserve_buckets(std::size_t stride) {
        counts_.assign(used_ + 1, 0);
        for (const std::uint64_t t : sample_)
            if (t <= epoch_last_) ++counts_[((t - base_) >> shift_) + 1];
        for (std::uint32_t i = 1; i <= used_; ++i) counts_[i] += counts_[i - 1];
        for (std::uint32_t i = 0; i < used_; ++i) {
            const std::uint32_t from = i > kSmooth ? i - kSmooth : 0;
            const std::uint32_t to = std::min(used_, i + kSmooth + 1);
            const std::size_t share = std::size_t{counts_[to] - counts_[from]} * stride / (to - from);
            buckets_[i].reserve(share + share / 4);
        }
    }

    // near_ holds every event and its heap has grown large: make them an
    // epoch and take its first bucket as near_. overflow_ (empty here) must
    // hold events of one time in push order: the rest of run_ (sorted,
    // pushed before late_), then late_ sorted.
    void spread_near() {
        overflow_.insert(overflow_.end(), run_next_, run_end_);
        std::sort_heap(late_.begin(), late_.end(), Later{});
        for (auto l = late_.rbegin(); l != late_.rend(); ++l) overflow_.push_back(l->event);
        late_.clear();
        refill(); // more than kSmall: a new epoch, its first bucket near_
    }

    // The rest of the epoch into a new one (near_ is empty).
    void respread() {
        for (std::uint32_t i = next_; i < used_; ++i) {
            overflow_.insert(overflow_.end(), buckets_[i].begin(), buckets_[i].end());
            Events().swap(buckets_[i]);
        }
        start_epoch(); // more than kSmall events: true, and bucket 0 holds the earliest
    }

    // late_'s first comes before run_'s next (a tie: run_'s, pushed earlier).
    bool late_first() const noexcept {
        return !late_.empty() && (run_next_ == run_end_ || earlier(late_.front().event, *run_next_));
    }

    Events run_;  // near_: the current bucket, sorted, [run_next_, run_end_) to come
    // What run_next_ points to when run_ is used up (late_ may still hold
    // events): next_time() reads its time without a test.
    static constexpr Event kNone{UINT64_MAX, Payload{}};
    const Event* run_next_ = &kNone;
    const Event* run_end_ = &kNone;
    std::vector<Late> late_;  // near_: events scheduled into it since, a heap
    std::vector<Events> buckets_;
    Events overflow_;
    std::vector<std::uint64_t> sample_; // start_epoch()'s sample of overflow_'s times
    std::vector<std::uint32_t> counts_; // sort_bucket()'s sub-bucket offsets
    std::uint64_t near_last_ = UINT64_MAX;  // near_ holds exactly the events up to it
    std::uint64_t epoch_last_ = UINT64_MAX; // overflow_ holds exactly the events after it
    std::uint64_t base_ = 0;               // time of bucket 0's start
    unsigned shift_ = 0;                   // log2 of a bucket's width in ns
    std::uint32_t used_ = 0;               // buckets in the epoch
    std::uint32_t next_ = 0;               // the next bucket to become near_
    std::size_t size_at_epoch_ = 0; // events when the epoch was laid out
    std::size_t crowded_ = 16 * kPerBucket; // more in the next bucket: a new epoch (refill())
    std::size_t epochs_laid_out_ = 0;
    std::size_t ops_at_epoch_ = 0;  // pushes_ + pops_ then
    std::size_t pushes_ = 0;        // ever (also late_'s sequence numbers)
    std::size_t pops_ = 0;
};

} // namespace timersim
