#include "wheel/seeds/cog_wheel.hpp"

#include <string>

namespace timersim {

static_assert(TimerQueue<CogWheel>);

CogWheel::CogWheel() : CogWheel(Config{}) {}

CogWheel::CogWheel(Config config)
    : TickedQueue<CogWheel>(config.start_jiffies.value_or(initial_jiffies(config.hz))), rings_(config.rings),
      clk_(jiffies_),
      buckets_(static_cast<std::size_t>(config.rings) * kRingSize) {
    if (config.hz == 0) throw std::invalid_argument("hz must be positive");
    // The clamp for deltas beyond the range needs a top ring that cascades.
    if (config.rings < 2 || config.rings > kMaxRings) throw std::invalid_argument("cog rings must be 2..10");
}

// The article's tail-pointer append: into the tail block, or a new block
// (from the free list) linked behind it.
void CogWheel::append(Chain& c, Entry e) {
    if (c.tail == kNoBlock || blocks_[c.tail].size == kBlockEntries) {
        std::uint32_t b;
        if (free_blocks_ != kNoBlock) {
            b = free_blocks_;
            free_blocks_ = blocks_[b].next;
        } else {
            b = static_cast<std::uint32_t>(blocks_.size());
            blocks_.emplace_back();
        }
        blocks_[b].next = kNoBlock;
        blocks_[b].size = 0;
        if (c.tail == kNoBlock)
            c.head = b;
        else
            blocks_[c.tail].next = b;
        c.tail = b;
    }
    Block& t = blocks_[c.tail];
    t.entries[t.size++] = e;
}

void CogWheel::free_chain(Chain& c) {
    if (c.head == kNoBlock) return;
    blocks_[c.tail].next = free_blocks_;
    free_blocks_ = c.head;
    c = Chain{};
}

void CogWheel::place(TimerId id) {
    Node& n = pool_[id];
    const Jiffies d = n.expires - clk_;
    unsigned ring = 0;
    unsigned slot;
    if (static_cast<std::int64_t>(d) < 0) {
        slot = static_cast<unsigned>(clk_ & (kRingSize - 1)); // the past: the next tick
    } else {
        while (ring + 1 < rings_ && d >> (kRingBits * (ring + 1)) != 0) ++ring;
        const unsigned top_bits = kRingBits * rings_;
        // Beyond the top ring's range: as if at the longest delta it holds.
        const Jiffies at = top_bits < 64 && d >> top_bits != 0 ? clk_ + ((Jiffies{1} << top_bits) - 1) : n.expires;
        slot = static_cast<unsigned>((at >> (kRingBits * ring)) & (kRingSize - 1));
    }
    n.bucket = static_cast<std::uint16_t>(ring * kRingSize + slot);
    append(buckets_[n.bucket], Entry{id, generation_[id]});
}

// The entry of a pending timer dies where it is.
void CogWheel::tombstone(TimerId id) {
    Node& n = pool_[id];
    ++generation_[id];
    n.pending = false;
    --pending_;
    ++counters_.paper.stop;
    if (++counters_.garbage > counters_.peak_garbage) counters_.peak_garbage = counters_.garbage;
}

ArmOutcome CogWheel::arm(TimerId id, Jiffies expires, ArmCall call) {
    Node& n = pool_.at(id);
    if (!n.pending) pool_.check_live(n, id);
    ++counters_.arms;
    if (n.pending)
        tombstone(id);
    else if (call == ArmCall::mod_timer_pending)
        return ArmOutcome::not_pending;
    if (pending_++ == 0) clk_ = jiffies_; // an empty wheel does not walk stale ticks
    n.pending = true;
    n.expires = expires;
    ++generation_[id];
    place(id);
    ++counters_.enqueues;
    ++counters_.paper.start;
    if (pending_ > counters_.peak_pending) counters_.peak_pending = pending_;
    return ArmOutcome::queued;
}

ArmOutcome CogWheel::arm_detach(TimerId id, Jiffies& /*expires*/, ArmCall call) {
    pool_.check(id);
    if (pool_[id].pending) {
        tombstone(id);
    } else if (call == ArmCall::mod_timer_pending) {
        ++counters_.arms;
        return ArmOutcome::not_pending;
    }
    return ArmOutcome::queued;
}

bool CogWheel::cancel(TimerId id) {
    Node& n = pool_.at(id);
    if (!n.pending) {
        pool_.check_live(n, id);
        return false;
    }
    tombstone(id);
    ++counters_.cancels;
    return true;
}

// Re-place every live entry of one bucket relative to clk (still the tick
// being processed); tombstones are dropped, and their space with the blocks.
void CogWheel::cascade(unsigned ring, unsigned slot) {
    ++counters_.cascades;
    ++counters_.buckets_scanned;
    Chain chain = buckets_[ring * kRingSize + slot];
    buckets_[ring * kRingSize + slot] = Chain{};
    for (std::uint32_t b = chain.head; b != kNoBlock; b = blocks_[b].next) {
        for (std::uint32_t i = 0; i < blocks_[b].size; ++i) {
            const Entry e = blocks_[b].entries[i];
            ++counters_.paper.per_tick;
            if (!live(e)) {
                --counters_.garbage;
                ++counters_.list_steps;
                continue;
            }
            place(e.timer); // may append blocks: blocks_[b] is read again each time
            ++counters_.cascade_moves;
            ++counters_.cascade_moves_from_level[ring];
        }
    }
    free_chain(chain);
}

// cog_tick() for tick t: at a multiple of 64, ring 1's slot for t cascades,
// and ring r+1's too while ring r's slot was 0; then ring 0's slot is due.
void CogWheel::collect(Jiffies t) {
    ++counters_.jiffies_walked;
    ++counters_.paper.per_tick;
    const unsigned index = static_cast<unsigned>(t & (kRingSize - 1));
    if (index == 0) {
        for (unsigned ring = 1; ring < rings_; ++ring) {
            const unsigned slot = static_cast<unsigned>((t >> (kRingBits * ring)) & (kRingSize - 1));
            cascade(ring, slot);
            if (slot != 0) break;
        }
    }
    ++counters_.buckets_scanned;
    work_ = buckets_[index];
    work_pos_ = 0;
    buckets_[index] = Chain{};
}

std::optional<Jiffies> CogWheel::next_timer_interrupt() {
    if (carry_over()) return jiffies_;
    if (pending_ == 0) return std::nullopt;
    ++counters_.next_expiry_searches;
    bool found = false;
    Jiffies best = 0;
    for (const Chain& c : buckets_) {
        ++counters_.next_expiry_search_steps;
        for (std::uint32_t b = c.head; b != kNoBlock; b = blocks_[b].next)
            for (std::uint32_t i = 0; i < blocks_[b].size; ++i) {
                ++counters_.next_expiry_search_steps;
                const Entry& e = blocks_[b].entries[i];
                if (!live(e)) continue;
                const Jiffies at = pool_[e.timer].expires;
                if (!found || time_before(at, best)) best = at;
                found = true;
            }
    }
    return time_before_eq(best, jiffies_) ? jiffies_ : best;
}

Placement CogWheel::placement(TimerId id) const {
    pool_.check(id);
    const Node& n = pool_[id];
    Placement p;
    p.pending = n.pending;
    p.expires = n.expires;
    if (!n.pending) return p;
    p.level = n.bucket / kRingSize;
    p.slot = n.bucket % kRingSize;
    p.bucket_expiry = time_after_eq(n.expires, clk_) ? n.expires : clk_;
    return p;
}

QueueLayout CogWheel::layout() const {
    QueueLayout l;
    l.summary = "cog (" + std::to_string(rings_) + " rings of 64): clk " + std::to_string(clk_) + ", " +
                std::to_string(pending_) + " pending, " + std::to_string(counters_.garbage) + " tombstones in " +
                std::to_string(blocks_.size()) + " blocks";
    for (unsigned r = 0; r < rings_; ++r) {
        LayoutRow row{"ring" + std::to_string(r), {}, 0,
                      static_cast<unsigned>((clk_ >> (kRingBits * r)) & (kRingSize - 1))};
        for (unsigned s = 0; s < kRingSize; ++s) {
            std::uint32_t live_entries = 0;
            const Chain& c = buckets_[r * kRingSize + s];
            for (std::uint32_t b = c.head; b != kNoBlock; b = blocks_[b].next)
                for (std::uint32_t i = 0; i < blocks_[b].size; ++i) live_entries += live(blocks_[b].entries[i]);
            row.counts.push_back(live_entries);
            row.total += live_entries;
        }
        l.rows.push_back(std::move(row));
    }
    return l;
}

} // namespace timersim
