#include "wheel/seeds/cog_wheel.hpp"

#include <string>

namespace timersim {

static_assert(TimerQueue<CogWheel>);

CogWheel::CogWheel(Config config)
    : TickedQueue<CogWheel>(config.start_jiffies.value_or(initial_jiffies(config.hz))), rings_(config.rings),
      buckets_(static_cast<std::size_t>(config.rings) * kRingSize) {
    check_config_hz(config.hz);
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

// cog_schedule_at(): a new generation, so an entry of an earlier arm stays
// dead, and an entry in the ring and slot of the delta.
void CogWheel::start(Node& n, TimerId id, Jiffies expires) {
    note_started();
    n.pending = true;
    n.expires = expires;
    ++generation_[id];
    place(id);
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

Jiffies CogWheel::next_event() noexcept {
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
    return best;
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
