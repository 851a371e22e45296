#include "wheel/configurable/in_place_wheel.hpp"

namespace timersim {

namespace {

// ceil(clk / 2^shift): level `shift`'s clock, rounded up while the lower
// level has not wrapped (6.1 __next_timer_interrupt()'s adjustment, nested).
constexpr Jiffies level_clock(Jiffies clk, unsigned shift) noexcept {
    return (clk >> shift) + ((clk & ((Jiffies{1} << shift) - 1)) != 0 ? 1 : 0);
}

// The level's bitmap rotated so that bucket `start` is bit 0.
constexpr std::uint64_t rotate(std::uint64_t map, unsigned start, unsigned bits) noexcept {
    if (bits == 6) return std::rotr(map, static_cast<int>(start));
    const unsigned size = 1u << bits;
    if (start == 0) return map;
    return ((map >> start) | (map << (size - start))) & ((std::uint64_t{1} << size) - 1);
}

} // namespace

InPlaceWheel::InPlaceWheel(Config config)
    : g_(config.geometry ? *config.geometry : parse_wheel_spec("wheel:modern").geometry(config.hz)),
      deferrable_base_(config.deferrable_base),
      jiffies_(config.start_jiffies.value_or(initial_jiffies(config.hz))),
      bases_{Base(g_.buckets() + g_.depth, jiffies_), Base(g_.buckets() + g_.depth, jiffies_)} {
    check_config_hz(config.hz);
    if (g_.mode != WheelMode::in_place) throw std::invalid_argument("InPlaceWheel needs an in-place geometry");
    g_.validate();
    if (g_.shift[0] != 0 && g_.round == WheelRound::down)
        throw WheelSpecError("base: a coarser level 0 needs round=up (rounding down it would skip its buckets)");
}

// 6.1 calc_wheel_index() and calc_index(), for any geometry.
InPlaceWheel::Index InPlaceWheel::index_of(const WheelGeometry& g, Jiffies expires, Jiffies clk) noexcept {
    auto at_level = [&](Jiffies e, unsigned level) {
        const Jiffies q = (e >> g.shift[level]) + (g.round == WheelRound::up ? 1 : 0);
        return Index{g.offset(level) + static_cast<unsigned>(q & (g.slots(level) - 1)), level, q << g.shift[level]};
    };
    const Jiffies delta = expires - clk;
    if (delta < g.cutoff()) {
        unsigned level = 0;
        while (level + 1 < g.depth && delta >= g.level_start(level + 1)) ++level;
        return at_level(expires, level);
    }
    if (static_cast<std::int64_t>(delta) < 0) {
        // In the past: level 0's bucket of clk (6.1: clk & LVL_MASK, run at clk).
        const Jiffies q = level_clock(clk, g.shift[0]);
        return Index{static_cast<unsigned>(q & (g.slots(0) - 1)), 0, q << g.shift[0]};
    }
    return at_level(clk + g.timeout_max(), g.depth - 1); // clamped: fires early
}

// 6.1 forward_timer_base().
void InPlaceWheel::forward_timer_base(Base& b) noexcept {
    if (jiffies_diff(jiffies_, b.clk) < 1) return;
    forward_idle_base(b, jiffies_);
}

// 6.1 enqueue_timer().
void InPlaceWheel::link(Base& b, TimerId id, Node& n, const Index& ix) noexcept {
    b.buckets.push_front(pool_.nodes(), ix.idx, id);
    b.pending_map[ix.level] |= std::uint64_t{1} << (ix.idx - g_.offset(ix.level));
    n.idx = static_cast<std::uint16_t>(ix.idx);
    n.bucket_expiry = ix.bucket_expiry;
    ++counters_.enqueues;
    note_bucket_expiry(b, ix.bucket_expiry);
}

// 6.1 detach_if_pending()'s list part.
void InPlaceWheel::unlink(Base& b, TimerId id, const Node& n) noexcept {
    if (BucketLists::is_only(n.idx, n)) {
        const unsigned level = level_of_idx(n.idx);
        b.pending_map[level] &= ~(std::uint64_t{1} << (n.idx - g_.offset(level)));
        b.next_expiry_recalc = true;
    }
    b.buckets.unlink(pool_.nodes(), id);
}

// 6.1 detach_if_pending() for a pending timer.
void InPlaceWheel::detach(Base& b, TimerId id, Node& n) noexcept {
    unlink(b, id, n);
    n.pending = false;
    --b.queued;
}

// 6.1 __mod_timer().
ArmOutcome InPlaceWheel::arm(TimerId id, Jiffies expires, ArmCall call) {
    Node& n = pool_.at(id);
    Base& b = bases_[n.base];
    if (n.pending) {
        ++counters_.arms;
        Index ix{};
        if (const auto shortcut = pending_shortcuts(b, n, expires, ix)) return *shortcut;
        unlink(b, id, n);
        n.expires = expires;
        link(b, id, n, ix);
        return ArmOutcome::queued;
    }
    if (!idle_may_queue(b, n, id, call)) return ArmOutcome::not_pending;
    n.expires = expires;
    link(b, id, n, index_of(g_, expires, b.clk));
    n.pending = true;
    ++b.queued;
    if (pending() > counters_.peak_pending) counters_.peak_pending = pending();
    return ArmOutcome::queued;
}

bool InPlaceWheel::cancel(TimerId id) {
    return del_timer(id, [&](Node& n) { detach(bases_[n.base], id, n); });
}

// 6.1 collect_expired_timers(): clk jumps to next_expiry; level L's bucket
// of that clock is looked at while clk is a multiple of level L's granularity.
unsigned InPlaceWheel::collect(Base& b) noexcept {
    const Jiffies clk = b.clk = b.next_expiry;
    unsigned levels = 0;
    for (unsigned level = 0; level < g_.depth; ++level) {
        if (level > 0 && (clk & (g_.granularity(level) - 1)) != 0) break;
        ++counters_.buckets_scanned;
        const unsigned bit = static_cast<unsigned>((clk >> g_.shift[level]) & (g_.slots(level) - 1));
        if (b.pending_map[level] & (std::uint64_t{1} << bit)) {
            b.pending_map[level] &= ~(std::uint64_t{1} << bit);
            b.buckets.move_list(pool_.nodes(), g_.offset(level) + bit, work_list(level));
            levels |= 1u << level;
        }
    }
    return levels;
}

// 6.1 __next_timer_interrupt() for any geometry.
InPlaceWheel::Search InPlaceWheel::search(const Base& b) const noexcept {
    Jiffies next = b.clk + Base::kNextTimerMaxDelta;
    unsigned steps = 0;
    for (unsigned level = 0; level < g_.depth; ++level) {
        ++steps;
        const Jiffies c = level_clock(b.clk, g_.shift[level]);
        const unsigned start = static_cast<unsigned>(c & (g_.slots(level) - 1));
        const std::uint64_t rotated = rotate(b.pending_map[level], start, g_.bits[level]);
        if (rotated != 0) {
            const unsigned pos = static_cast<unsigned>(std::countr_zero(rotated));
            const Jiffies at = (c + pos) << g_.shift[level];
            if (time_before(at, next)) next = at;
            if (level + 1 == g_.depth) break;
            // Nothing above comes before the next level's first bucket.
            const Jiffies div = Jiffies{1} << (g_.shift[level + 1] - g_.shift[level]);
            const Jiffies lvl_clk = c & (div - 1);
            if (pos <= ((div - lvl_clk) & (div - 1))) break;
        }
    }
    return Search{next, steps};
}

Jiffies InPlaceWheel::next_timer_search(Base& b) noexcept {
    const Search s = search(b);
    return note_next_search(b, s.next, s.steps, counters_);
}

Placement InPlaceWheel::placement(TimerId id) const {
    pool_.check(id);
    const Node& n = pool_[id];
    Placement p = placement_of(n);
    if (!n.pending) return p;
    p.deferrable_base = n.base == 1;
    p.level = level_of_idx(n.idx);
    p.slot = n.idx;
    p.bucket_expiry = n.bucket_expiry;
    return p;
}

QueueLayout InPlaceWheel::layout() const {
    QueueLayout l;
    l.summary = "clk " + std::to_string(bases_[0].clk) + ", " + std::to_string(bases_[0].queued) + " pending";
    if (bases_[1].queued) l.summary += ", deferrable base clk " + std::to_string(bases_[1].clk) + ", " +
                                       std::to_string(bases_[1].queued) + " pending";
    for (unsigned base = 0; base < (bases_[1].queued ? 2u : 1u); ++base) {
        const Base& b = bases_[base];
        if (base == 1) l.deferrable_row = static_cast<unsigned>(l.rows.size());
        for (unsigned level = 0; level < g_.depth; ++level) {
            LayoutRow row{(base ? "dL" : "L") + std::to_string(level), {}, 0,
                          static_cast<unsigned>((b.clk >> g_.shift[level]) & (g_.slots(level) - 1)), g_.offset(level)};
            for (unsigned s = 0; s < g_.slots(level); ++s) {
                row.counts.push_back(b.buckets.count(pool_.nodes(), g_.offset(level) + s));
                row.total += row.counts.back();
            }
            l.rows.push_back(std::move(row));
        }
    }
    return l;
}

} // namespace timersim
