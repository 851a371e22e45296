#include "wheel/kernel/classic_wheel.hpp"

#include <algorithm>

namespace timersim {

using namespace classic;

ClassicWheel::ClassicWheel(Config config)
    : geometry_(config.geometry), slack_(config.slack), slot_table_(geometry_),
      jiffies_(config.start_jiffies.value_or(initial_jiffies(config.hz))),
      timer_jiffies_(jiffies_), next_timer_(jiffies_), // 4.x init_timer_cpu()
      lists_(geometry_.wheel_lists() + 2) {
    check_config_hz(config.hz);
    if (geometry_.tvr_bits == 0 || geometry_.tvn_bits == 0 ||
        geometry_.tvr_bits + 4 * geometry_.tvn_bits > 63 || geometry_.wheel_lists() + 2 > 0xFFFF)
        throw std::invalid_argument("unsupported classic wheel geometry");
}

unsigned ClassicWheel::far_list(Jiffies expires) const noexcept {
    const Slot s = calc_slot(expires, timer_jiffies_, geometry_);
    return geometry_.list_id(s.array, s.slot);
}

Jiffies ClassicWheel::with_slack(Jiffies expires) const noexcept {
    return apply_slack(expires, jiffies_, *slack_);
}

// 4.x cascade(): re-place every timer of one slot relative to the current T
// (before T is incremented). Taken newest first and added as the newest of
// their new lists, exactly as hlist_for_each_entry_safe + hlist_add_head do;
// before 4.2 (SlotOrder::oldest_first) oldest first, each appended: 3.6
// cascade() keeps their order.
void ClassicWheel::cascade(unsigned array, unsigned slot) {
    auto& nodes = pool_.nodes();
    ++counters_.cascades;
    ++counters_.buckets_scanned;
    lists_.collect(geometry_.list_id(array, slot), cascade_list());
    if (slot_order_ == SlotOrder::oldest_first) [[unlikely]] lists_.reverse_live(nodes, cascade_list());
    for (TimerId id; (id = lists_.pop_live(nodes, cascade_list())) != kNoTimer;) {
        place(nodes[id], id);
        ++counters_.cascade_moves;
        ++counters_.cascade_moves_from_level[array];
        if (cascade_observer_) [[unlikely]] cascade_observer_(cascade_context_, id, array, slot);
    }
}

// 4.x __next_timer_interrupt(): scan tv1 from T's slot for the first
// non-deferrable timer; if that scan wrapped or T's slot is 0, cascades may
// bring something earlier, so scan tv2..tv5 from their next cascade slots,
// keeping the minimum, until a level yields a timer without wrapping.
Jiffies ClassicWheel::next_timer_scan() noexcept {
    ++counters_.next_expiry_searches;
    const auto& nodes = pool_.nodes();
    Jiffies tj = timer_jiffies_;
    Jiffies expires = tj + kNextTimerMaxDelta;
    bool found = false;
    // The first non-deferrable timer of a list, if any; counts entries walked.
    auto first_active = [&](std::size_t list, auto&& visit) {
        lists_.for_each_live(nodes, list, [&](TimerId t) {
            ++counters_.next_expiry_search_steps;
            return nodes[t].deferrable || visit(nodes[t].expires);
        });
    };

    const unsigned tv1_mask = geometry_.tvr_size() - 1;
    const unsigned index = static_cast<unsigned>(tj & tv1_mask);
    unsigned slot = index;
    do {
        ++counters_.next_expiry_search_steps;
        bool hit = false;
        first_active(geometry_.list_id(1, slot), [&](Jiffies e) {
            found = hit = true;
            expires = e;
            return false;
        });
        if (hit) {
            if (index != 0 && slot >= index) return expires;
            break; // wrapped, or T at slot 0: a cascade may hold an earlier timer
        }
        slot = (slot + 1) & tv1_mask;
    } while (slot != index);

    if (index) tj += geometry_.tvr_size() - index;
    tj >>= geometry_.tvr_bits;
    const unsigned tvn_mask = geometry_.tvn_size() - 1;
    for (unsigned array = 2; array <= kArrays; ++array) {
        const unsigned level_index = static_cast<unsigned>(tj & tvn_mask);
        slot = level_index;
        do {
            ++counters_.next_expiry_search_steps;
            first_active(geometry_.list_id(array, slot), [&](Jiffies e) {
                found = true;
                if (time_before(e, expires)) expires = e;
                return true;
            });
            if (found) {
                if (level_index == 0 || slot < level_index) break;
                return expires;
            }
            slot = (slot + 1) & tvn_mask;
        } while (slot != level_index);
        if (level_index) tj += geometry_.tvn_size() - level_index;
        tj >>= geometry_.tvn_bits;
    }
    return expires;
}

Placement ClassicWheel::last_placement(TimerId id) const {
    pool_.check(id);
    const Node& n = pool_[id];
    Placement p = placement_of(n);
    const unsigned tvr = geometry_.tvr_size();
    if (n.idx < tvr) {
        p.level = 1;
        p.slot = n.idx;
    } else {
        p.level = 2 + (n.idx - tvr) / geometry_.tvn_size();
        p.slot = (n.idx - tvr) % geometry_.tvn_size();
    }
    // Gone from its list, the timer has no step to run in (0).
    if (n.pending) p.bucket_expiry = runs_at(n);
    return p;
}

// The loop step that will run a pending timer, which the node does not
// store. In a wheel list: its expiry, or T for an expiry T has passed (4.x
// __internal_add_timer() puts a past expiry in tv1's slot of T, and a
// pending timer's step has not come yet, so T has not moved since). In the
// work list: the step that collected it (T stays one past that step while
// the list holds timers: only an empty wheel snaps T).
Jiffies ClassicWheel::runs_at(const Node& n) const noexcept {
    if (!lists_.holds(n.idx, n)) return timer_jiffies_ - 1;
    return time_after_eq(n.expires, timer_jiffies_) ? n.expires : timer_jiffies_;
}

} // namespace timersim
