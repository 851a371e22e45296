// CogWheel: cog, the seeds' hierarchical timing wheel in C ("Anatomy of a
// Timing Wheel: Design Decisions Behind a Scheduler in C"), modelled from
// its article: base-64 rings of 64 buckets that cascade, firing on exactly
// the tick asked for, each bucket a linked list of blocks of 64 entries with
// a tail pointer (appending is O(1), a tick walks packed arrays). cog has no
// cancel; the article's open question is answered here with tombstones: a
// cancel (or a re-arm) only bumps the timer's generation, so its entry dies
// in place and is skipped, and reclaimed, when its bucket is next drained.
// The dead entries are the garbage the report shows (counters().garbage now,
// peak_garbage the most ever held).
//
//   CogWheel w(CogWheel::Config{.hz = 250});
//   const TimerId t = w.create();
//   w.arm(t, w.jiffies() + 5000);   // ring 2 (delta 4096 .. 262143), slot (expires >> 12) & 63
//   w.cancel(t);                    // a tombstone, until ring 2's slot cascades
//
// Callbacks passed to run_softirq may arm and cancel any timer (wheel/
// timer_queue.hpp); an entry cancelled after its bucket was collected is a
// tombstone in the work list and is skipped.
//
//   Ring  Buckets  Bucket width   Delta range d (ticks)      Cascaded when clk is a multiple of
//   0       64     1              0 .. 63                    - (one bucket per tick)
//   1       64     64             64 .. 4095                 64
//   2       64     4096           4096 .. 262143             4096
//   r       64     64^r           64^r .. 64^(r+1) - 1       64^r
//   (8 rings by default: deltas up to 2^48 - 1; a longer one is placed as
//   if it were that long and laps the top ring, still firing exactly)
//
// Placement is by d = expires - clk (clk: the next tick to process) and the
// expiry's own bits, ring r's slot = (expires >> 6r) & 63, and a tick that
// is a multiple of 64 first cascades ring 1's slot for it (ring 2's too if
// that slot was 0, and so on) and then drains ring 0's slot: the cascade
// comes before the drain, both relative to the same clk, which is what
// keeps a cascaded timer from landing in a slot already read this tick (the
// article's "fires a tick early" trap). Appends keep FIFO order in a bucket.
#pragma once

#include "wheel/core/clock.hpp"
#include "wheel/core/queue_layout.hpp"
#include "wheel/core/ticked_queue.hpp"
#include "wheel/core/timer_pool.hpp"
#include "wheel/core/timer_queue.hpp"

#include <optional>
#include <stdexcept>
#include <vector>

namespace timersim {

class CogWheel : public TickedQueue<CogWheel> {
    friend class TickedQueue<CogWheel>;
    friend class QueueBasics<CogWheel>;

public:
    static constexpr std::string_view name = "cog";
    static constexpr unsigned kRingBits = 6;
    static constexpr unsigned kRingSize = 1u << kRingBits; // 64 buckets a ring
    static constexpr unsigned kBlockEntries = 64;          // entries a block
    static constexpr unsigned kDefaultRings = 8;
    static constexpr unsigned kMaxRings = 10;

    struct Config {
        unsigned hz = 0; // CONFIG_HZ, 1..kMaxHz: always given (0 is none; no HZ is assumed)
        std::optional<Jiffies> start_jiffies; // default: INITIAL_JIFFIES for hz
        unsigned rings = kDefaultRings;       // 2 .. kMaxRings
    };

    struct Node {
        TimerId next = kNoTimer; // free-list link only
        bool live = false;
        bool pending = false;
        std::uint16_t bucket = 0; // ring * 64 + slot of its live entry
        Jiffies expires = 0;
    };
    struct Entry {
        TimerId timer;
        std::uint32_t generation; // live while it equals the timer's generation
    };
    struct Block {
        std::uint32_t next = kNoBlock;
        std::uint32_t size = 0;
        Entry entries[kBlockEntries];
    };
    static constexpr std::uint32_t kNoBlock = 0xFFFFFFFFu;

    explicit CogWheel(Config config);

    TimerId create(TimerFlags = {}) {
        const TimerId id = pool_.create();
        if (generation_.size() <= id) generation_.resize(id + 1, 0);
        return id;
    }

    bool carry_over() const noexcept { return work_.head != kNoBlock; }

    // Node, its generation and one 8-byte entry (a block's 8-byte header
    // over 64 entries adds 1/8 byte).
    static constexpr std::size_t bytes_per_timer() noexcept {
        return sizeof(Node) + sizeof(std::uint32_t) + sizeof(Entry);
    }
    // What one tombstone keeps (counters().garbage counts them).
    static constexpr std::size_t garbage_entry_bytes() noexcept { return sizeof(Entry); }
    void reserve_beside_pool(std::size_t timers) { generation_.reserve(timers); }
    QueueLayout layout() const;
    unsigned rings() const noexcept { return rings_; }
    Jiffies clk() const noexcept { return clk_; }
    // Blocks allocated now (buckets' and free ones), for the memory story.
    std::size_t blocks() const noexcept { return blocks_.size(); }

private:
    struct Chain {
        std::uint32_t head = kNoBlock;
        std::uint32_t tail = kNoBlock;
    };

    // TickedQueue's steps (wheel/core/ticked_queue.hpp). cog_tick() is
    // called every tick; it has work while a timer is pending.
    bool holds_timers() const noexcept { return pending_ > 0; }
    void start(Node& n, TimerId id, Jiffies expires);
    void stop(Node&, TimerId id) { tombstone(id); }
    void process_tick() {
        // Cascades place relative to the tick being processed; what
        // its callbacks arm, relative to the next one.
        const Jiffies t = clk_;
        collect(t);
        clk_ = t + 1;
    }
    // cog cannot skip ahead (the article); for an idle CPU this walks every
    // entry for the earliest live expiry (counted as next-expiry steps).
    Jiffies next_event() noexcept;
    // level = ring, slot = bucket in the ring.
    void place_of(const Node& n, Placement& p) const noexcept {
        p.level = n.bucket / kRingSize;
        p.slot = n.bucket % kRingSize;
    }

    bool live(const Entry& e) const noexcept {
        return pool_[e.timer].pending && generation_[e.timer] == e.generation;
    }
    void append(Chain& c, Entry e);
    void free_chain(Chain& c);
    void place(TimerId id);    // cog_schedule_at(): the ring and slot by delta
    void tombstone(TimerId id);
    void cascade(unsigned ring, unsigned slot);
    void collect(Jiffies t);   // a tick: cascades, then ring 0's slot into the work chain

    // Runs the work chain from (work_.head, work_pos_).
    template <bool Bounded, class F>
    bool expire_work(F& on_fire, std::uint64_t& budget) {
        const Jiffies base_clk = clk_ - 1;
        while (work_.head != kNoBlock) {
            Block& b = blocks_[work_.head];
            if (work_pos_ == b.size) {
                const std::uint32_t next = b.next;
                b.next = free_blocks_;
                free_blocks_ = work_.head;
                work_.head = next;
                if (next == kNoBlock) work_.tail = kNoBlock;
                work_pos_ = 0;
                continue;
            }
            const Entry e = b.entries[work_pos_++];
            if (!live(e)) {
                --counters_.garbage;
                ++counters_.list_steps;
                ++counters_.paper.per_tick;
                continue;
            }
            Node& n = pool_[e.timer];
            if (expire<Bounded>(n, FiredTimer{e.timer, n.expires, base_clk}, on_fire, budget)) return true;
        }
        return false;
    }

    unsigned rings_;
    std::vector<Chain> buckets_; // ring * 64 + slot
    Chain work_;                 // the collected bucket, run from work_pos_
    std::uint32_t work_pos_ = 0;
    std::vector<Block> blocks_;
    std::uint32_t free_blocks_ = kNoBlock;
    std::vector<std::uint32_t> generation_; // by TimerId, never reset: old entries stay dead
    TimerPool<Node> pool_;
    QueueCounters counters_;
};

} // namespace timersim
