// The classic wheel's rules (Linux 4.4, kernel/time/timer.c) for any
// geometry: slot_of() follows internal_add_timer()'s choice of tv1..tvN by
// idx = expires - timer_jiffies (the past to tv1's current slot, beyond
// MAX_TVAL clamped); cascade() follows cascade(), re-placing one slot's
// timers a level down when the index of the level below wraps to 0; the run
// loop follows __run_timers(); next_timer_scan() follows __next_timer_interrupt().
// Our own code, checked in lock step against ClassicWheel
// (tests/wheel/test_configurable_wheel.cpp).
#include "wheel/configurable/cascading_wheel.hpp"

namespace timersim {

CascadingWheel::CascadingWheel(Config config)
    : g_(config.geometry), slack_(config.slack),
      jiffies_(config.start_jiffies.value_or(initial_jiffies(config.hz))), timer_jiffies_(jiffies_),
      next_timer_(jiffies_), lists_(config.geometry.buckets() + 2) {
    check_config_hz(config.hz);
    if (g_.mode != WheelMode::cascade) throw std::invalid_argument("CascadingWheel needs a cascade geometry");
    g_.validate();
}

// 4.x __internal_add_timer() for any geometry.
CascadingWheel::Slot CascadingWheel::slot_of(const WheelGeometry& g, Jiffies expires, Jiffies timer_jiffies) noexcept {
    auto at_level = [&](Jiffies e, unsigned level, bool clamped) {
        const unsigned shift = g.shift[level];
        Jiffies q = e >> shift;
        if (g.round == WheelRound::up && (e & ((Jiffies{1} << shift) - 1)) != 0) ++q;
        // Rounding down the timer reaches level 0 and runs at its expiry;
        // rounding up it runs when its slot is cascaded.
        const Jiffies runs_at = g.round == WheelRound::down || level == 0 ? expires : q << shift;
        return Slot{level, static_cast<unsigned>(q & (g.slots(level) - 1)), false, clamped, runs_at};
    };
    const Jiffies d = expires - timer_jiffies;
    for (unsigned level = 0; level + 1 < g.depth; ++level)
        if (d < g.range_end(level)) return at_level(expires, level, false);
    if (static_cast<std::int64_t>(d) < 0)
        return Slot{0, static_cast<unsigned>(timer_jiffies & (g.slots(0) - 1)), true, false, timer_jiffies};
    if (d > g.max_tval()) return at_level(timer_jiffies + g.max_tval(), g.depth - 1, true);
    return at_level(expires, g.depth - 1, false);
}

void CascadingWheel::place(Node& n, TimerId id) noexcept {
    const Slot s = slot_of(g_, n.expires, timer_jiffies_);
    n.list = static_cast<std::uint16_t>(g_.offset(s.level) + s.slot);
    n.runs_at = s.runs_at;
    lists_.push_front(pool_.nodes(), n.list, id);
}

// 4.x __mod_timer(): slack, the same-expiry shortcut, detach, enqueue (an
// empty wheel first snaps timer_jiffies to jiffies).
ArmOutcome CascadingWheel::arm(TimerId id, Jiffies expires, ArmCall call) {
    Node& n = pool_.at(id);
    if (!n.pending) pool_.check_live(n, id);
    ++counters_.arms;
    if (const auto ended = mod_timer_detach(n, id, expires, call)) return *ended;
    n.expires = expires;
    if (all_timers_++ == 0) timer_jiffies_ = jiffies_;
    place(n, id);
    n.pending = true;
    ++counters_.enqueues;
    if (all_timers_ > counters_.peak_pending) counters_.peak_pending = all_timers_;
    if (!n.deferrable && (active_timers_++ == 0 || time_before(due(n), next_timer_))) next_timer_ = due(n);
    return ArmOutcome::queued;
}

bool CascadingWheel::cancel(TimerId id) {
    return del_timer(id, [&](Node& n) { detach(n, id); });
}

// 4.x detach_if_pending(): removing the cached earliest timer makes
// next_timer stale; removing the last one snaps timer_jiffies to jiffies.
void CascadingWheel::detach(Node& n, TimerId id) noexcept {
    lists_.unlink(pool_.nodes(), id);
    n.pending = false;
    if (!n.deferrable) {
        --active_timers_;
        if (due(n) == next_timer_) next_timer_ = timer_jiffies_;
    }
    if (--all_timers_ == 0) timer_jiffies_ = jiffies_;
}

// 4.x cascade(): re-place one slot's timers from T, head first.
void CascadingWheel::cascade(unsigned level, unsigned slot) noexcept {
    auto& nodes = pool_.nodes();
    ++counters_.cascades;
    ++counters_.buckets_scanned;
    lists_.move_list(nodes, g_.offset(level) + slot, cascade_list());
    while (!lists_.empty(cascade_list())) {
        const TimerId id = lists_.front(cascade_list());
        lists_.unlink(nodes, id);
        place(nodes[id], id);
        ++counters_.cascade_moves;
        ++counters_.cascade_moves_from_level[level + 1];
    }
}

// 4.x __next_timer_interrupt() for any depth: level 0 from T's slot; if
// that wrapped or T's slot is 0, the levels above from their next cascade
// slots, keeping the minimum, until one yields a timer without wrapping.
Jiffies CascadingWheel::next_timer_scan() noexcept {
    ++counters_.next_expiry_searches;
    const auto& nodes = pool_.nodes();
    Jiffies tj = timer_jiffies_;
    Jiffies best = tj + classic::kNextTimerMaxDelta;
    bool found = false;
    // Visits the slot's non-deferrable timers until visit() says stop.
    auto walk = [&](std::size_t list, auto&& visit) {
        for (TimerId t = lists_.front(list); t != kNoTimer; t = nodes[t].next) {
            ++counters_.next_expiry_search_steps;
            if (nodes[t].deferrable) continue;
            if (!visit(due(nodes[t]))) return;
        }
    };
    for (unsigned level = 0; level < g_.depth; ++level) {
        const unsigned mask = g_.slots(level) - 1;
        const unsigned start = static_cast<unsigned>(tj & mask);
        unsigned slot = start;
        do {
            ++counters_.next_expiry_search_steps;
            bool hit = false;
            walk(g_.offset(level) + slot, [&](Jiffies e) {
                // Level 0: the first timer is the answer; above, the minimum.
                if (level == 0 || time_before(e, best)) best = e;
                found = hit = true;
                return level != 0;
            });
            if (level == 0 && hit) {
                if (start != 0 && slot >= start) return best;
                break; // wrapped, or T at slot 0: a cascade may hold an earlier timer
            }
            if (level != 0 && found) {
                if (start == 0 || slot < start) break;
                return best;
            }
            slot = (slot + 1) & mask;
        } while (slot != start);
        if (start) tj += g_.slots(level) - start;
        tj >>= g_.bits[level];
    }
    return best;
}

Placement CascadingWheel::placement(TimerId id) const {
    pool_.check(id);
    const Node& n = pool_[id];
    Placement p = placement_of(n);
    if (!n.pending) return p;
    unsigned level = 0;
    while (level + 1 < g_.depth && n.list >= g_.offset(level + 1)) ++level;
    p.level = level + 1;
    p.slot = n.list - g_.offset(level);
    p.bucket_expiry = n.runs_at;
    return p;
}

QueueLayout CascadingWheel::layout() const {
    QueueLayout l;
    l.first_level = 1;
    l.summary = "timer_jiffies " + std::to_string(timer_jiffies_) + ", " + std::to_string(all_timers_) + " pending";
    for (unsigned level = 0; level < g_.depth; ++level) {
        LayoutRow row{"L" + std::to_string(level + 1), {}, 0,
                      static_cast<unsigned>((timer_jiffies_ >> g_.shift[level]) & (g_.slots(level) - 1)), 0};
        for (unsigned s = 0; s < g_.slots(level); ++s) {
            row.counts.push_back(lists_.count(pool_.nodes(), g_.offset(level) + s));
            row.total += row.counts.back();
        }
        l.rows.push_back(std::move(row));
    }
    return l;
}

} // namespace timersim
