// PlainClassic: a deliberately plain model of one CPU's tvec_base of Linux
// 4.4 .. 4.7 (the cascading wheel), written from the rules in
// /work/shared/reference/kernel-timer-wheels.md §2 for the differential test.
// It shares no code with wheel/classic_wheel.* (only the pure slack helper
// classic::apply_slack, which test_classic_wheel.cpp checks on its own).
//
// When a timer runs is modelled straight from the rule of §2.3, independent of
// any list: a timer armed with E at or after T runs in the loop step whose T
// equals E; one armed in the past runs in the step T it was armed at. The
// model records that step ("runs_at") at arm time and checks it when the
// timer runs, and after every operation that no pending timer's step has gone
// by.
//
// Order within one step is what the kernel's lists produce, and that needs the
// lists' history. The model keeps it with sequence stamps instead of lists:
//   * every timer records the list it sits on (tv array + slot, §2.2) and the
//     stamp of the moment it was put there; hlist_add_head means a list read
//     from its head is its timers by stamp, newest first;
//   * cascading a slot (§2.3) takes its timers newest-stamp first (the
//     kernel's walk from the head) and gives each a fresh stamp on its new
//     list, so a cascade reverses the slot's order and puts the cascaded
//     timers in front of whatever the target list already held;
//   * a loop step runs tv1[T mod size] newest stamp first. Timers a callback
//     cancels or re-arms before their turn do not run.
// The slot rules themselves (array by distance from T, slot by the bits of
// the expiry, past -> tv1[T], beyond MAX_TVAL -> slot of T + MAX_TVAL) are
// written out here again.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/core/timer_queue.hpp"
#include "wheel/kernel/classic_levels.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <set>
#include <stdexcept>
#include <vector>

namespace timersim::model {

class PlainClassic {
public:
  static constexpr std::string_view name = "plain-classic";

  struct Config {
    unsigned hz = 250;
    Jiffies start_jiffies = 0;
    unsigned tvr_bits = 8; // 6 with CONFIG_BASE_SMALL
    unsigned tvn_bits = 6; // 4 with CONFIG_BASE_SMALL
    std::optional<std::int64_t> slack = -1;
  };

  struct Counters {
    std::uint64_t enqueues = 0;
    std::uint64_t same_expiry_shortcuts = 0;
    std::uint64_t cancels = 0;
    std::uint64_t expired = 0;
    std::uint64_t cascades = 0;
    std::uint64_t cascade_moves = 0;
    std::uint64_t cascade_moves_from_level[6] = {};
    std::uint64_t jiffies_walked = 0;
    std::uint64_t softirq_runs = 0;
    // Model self-checks: the list a timer ran from disagrees with the step
    // the rule says it runs in.
    std::uint64_t inconsistencies = 0;
  };

  explicit PlainClassic(Config c)
      : tvr_bits_(c.tvr_bits), tvn_bits_(c.tvn_bits), slack_(c.slack), jiffies_(c.start_jiffies),
        T_(c.start_jiffies), list_count_((1u << tvr_bits_) + 4 * (1u << tvn_bits_) + 1, 0) {}

  TimerId create(TimerFlags f = {}) {
    Timer t;
    t.deferrable = f.deferrable;
    timers_.push_back(t);
    return static_cast<TimerId>(timers_.size() - 1);
  }

  Jiffies jiffies() const { return jiffies_; }
  Jiffies timer_jiffies() const { return T_; }
  void set_jiffies(Jiffies j) {
    if (time_before(j, jiffies_)) throw std::invalid_argument("jiffies cannot go backwards");
    jiffies_ = j;
  }
  bool softirq_due() const { return true; } // 4.x raises TIMER_SOFTIRQ on every tick

  // 4.4 mod_timer() / mod_timer_pending() / mod_timer_pinned().
  ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
    Timer& t = timers_.at(id);
    if (call == ArmCall::mod_timer && slack_) expires = classic::apply_slack(expires, jiffies_, *slack_);
    if (call != ArmCall::mod_timer_pending && t.pending && t.expires == expires) {
      ++counters_.same_expiry_shortcuts;
      return ArmOutcome::same_expiry;
    }
    if (t.pending)
      detach(id);
    else if (call == ArmCall::mod_timer_pending)
      return ArmOutcome::not_pending;
    t.expires = expires;
    if (all_++ == 0) T_ = jiffies_; // an empty wheel catches up first
    if (!t.deferrable) ++active_;
    t.pending = true;
    t.runs_at = time_after_eq(expires, T_) ? expires : T_;
    put_on_list(id);
    ++counters_.enqueues;
    return ArmOutcome::queued;
  }

  bool cancel(TimerId id) {
    if (!timers_.at(id).pending) return false;
    detach(id);
    ++counters_.cancels;
    return true;
  }

  template <class F>
  void run_softirq(F&& on_fire) {
    ++counters_.softirq_runs;
    while (time_after_eq(jiffies_, T_)) {
      if (all_ == 0) {
        T_ = jiffies_;
        break;
      }
      ++counters_.jiffies_walked;
      const Jiffies step = T_;
      const unsigned index = static_cast<unsigned>(step % tvr_size());
      if (index == 0) {
        for (unsigned array = 2; array <= 5; ++array) {
          const unsigned slot = static_cast<unsigned>((step >> shift(array)) % tvn_size());
          cascade(array, slot);
          if (slot != 0) break;
        }
      }
      T_ = step + 1;
      const unsigned list = list_id(1, index);
      if (list_count_[list] == 0) continue;
      std::vector<TimerId> run = members(list);
      for (TimerId id : run) timers_[id].list = kWorkList;
      list_count_[list] = 0;
      for (TimerId id : run) {
        Timer& t = timers_[id];
        if (!t.pending || t.list != kWorkList) continue; // cancelled or re-armed meanwhile
        if (t.runs_at != step) ++counters_.inconsistencies;
        t.pending = false;
        t.list = kNoList;
        --all_;
        if (!t.deferrable) --active_;
        ++counters_.expired;
        on_fire(FiredTimer{id, t.expires, step});
      }
    }
  }

  // The earliest expiry over non-deferrable timers (§2.5: "min(E) gives the
  // same value"), as the set of answers the 4.x scan may give. The scan
  // returns the *first* timer of the first non-empty tv1 slot; a slot holds
  // timers of one expiry except tv1[T], where past timers (E before T) share
  // the slot with E == T. Then the answer is jiffies or T depending on list
  // order, so both are accepted in that one case.
  std::set<std::optional<Jiffies>> next_timer_interrupt_answers() const {
    std::optional<Jiffies> min_e, min_run;
    bool past = false;
    for (const Timer& t : timers_) {
      if (!t.pending || t.deferrable) continue;
      if (!min_e || time_before(t.expires, *min_e)) min_e = t.expires;
      if (!min_run || time_before(t.runs_at, *min_run)) min_run = t.runs_at;
      if (time_before(t.expires, T_)) past = true;
    }
    auto clamp = [&](std::optional<Jiffies> v) -> std::optional<Jiffies> {
      if (v && time_before_eq(*v, jiffies_)) return jiffies_;
      return v;
    };
    std::set<std::optional<Jiffies>> answers{clamp(min_e)};
    if (past) answers.insert(clamp(min_run));
    return answers;
  }

  // After every operation: no pending timer's run step may lie before T.
  bool overdue_timer() const {
    for (const Timer& t : timers_)
      if (t.pending && time_before(t.runs_at, T_)) return true;
    return false;
  }

  bool is_pending(TimerId id) const { return timers_.at(id).pending; }
  std::size_t pending() const { return all_; }

  Placement placement(TimerId id) const {
    const Timer& t = timers_.at(id);
    Placement p;
    p.pending = t.pending;
    p.expires = t.expires;
    if (!t.pending) return p;
    p.level = t.array;
    p.slot = t.slot;
    p.bucket_expiry = t.runs_at;
    return p;
  }

  const Counters& counters() const { return counters_; }

private:
  static constexpr unsigned kNoList = ~0u;
  static constexpr unsigned kWorkList = ~0u - 1;

  struct Timer {
    bool deferrable = false;
    bool pending = false;
    Jiffies expires = 0;
    Jiffies runs_at = 0;
    unsigned array = 0;
    unsigned slot = 0;
    unsigned list = kNoList;
    std::uint64_t stamp = 0;
  };

  unsigned tvr_size() const { return 1u << tvr_bits_; }
  unsigned tvn_size() const { return 1u << tvn_bits_; }
  unsigned shift(unsigned array) const { return array == 1 ? 0 : tvr_bits_ + (array - 2) * tvn_bits_; }
  unsigned list_id(unsigned array, unsigned slot) const {
    return array == 1 ? slot : tvr_size() + (array - 2) * tvn_size() + slot;
  }

  // §2.2 __internal_add_timer(), relative to the current T.
  void put_on_list(TimerId id) {
    Timer& t = timers_[id];
    const Jiffies d = t.expires - T_;
    Jiffies x = t.expires;
    unsigned array;
    if (d < (Jiffies{1} << tvr_bits_))
      array = 1;
    else if (d < (Jiffies{1} << (tvr_bits_ + tvn_bits_)))
      array = 2;
    else if (d < (Jiffies{1} << (tvr_bits_ + 2 * tvn_bits_)))
      array = 3;
    else if (d < (Jiffies{1} << (tvr_bits_ + 3 * tvn_bits_)))
      array = 4;
    else if (static_cast<std::int64_t>(d) < 0) {
      array = 1;
      x = T_; // past: the slot of T itself
    } else {
      array = 5;
      const Jiffies max_tval = (Jiffies{1} << (tvr_bits_ + 4 * tvn_bits_)) - 1;
      if (d > max_tval) x = T_ + max_tval;
    }
    const unsigned size = array == 1 ? tvr_size() : tvn_size();
    t.array = array;
    t.slot = static_cast<unsigned>((x >> shift(array)) % size);
    t.list = list_id(array, t.slot);
    t.stamp = ++stamp_;
    ++list_count_[t.list];
  }

  void detach(TimerId id) {
    Timer& t = timers_[id];
    if (t.list < list_count_.size()) --list_count_[t.list];
    t.list = kNoList;
    t.pending = false;
    if (!t.deferrable) --active_;
    if (--all_ == 0) T_ = jiffies_;
  }

  // The timers of one list as read from its head: newest stamp first.
  std::vector<TimerId> members(unsigned list) const {
    std::vector<TimerId> out;
    for (TimerId id = 0; id < timers_.size(); ++id)
      if (timers_[id].pending && timers_[id].list == list) out.push_back(id);
    std::sort(out.begin(), out.end(),
              [&](TimerId a, TimerId b) { return timers_[a].stamp > timers_[b].stamp; });
    return out;
  }

  void cascade(unsigned array, unsigned slot) {
    ++counters_.cascades;
    const unsigned list = list_id(array, slot);
    if (list_count_[list] == 0) return;
    const std::vector<TimerId> moving = members(list);
    list_count_[list] = 0;
    for (TimerId id : moving) {
      put_on_list(id);
      ++counters_.cascade_moves;
      ++counters_.cascade_moves_from_level[array];
    }
  }

  unsigned tvr_bits_;
  unsigned tvn_bits_;
  std::optional<std::int64_t> slack_;
  Jiffies jiffies_;
  Jiffies T_;
  std::size_t all_ = 0;
  std::size_t active_ = 0;
  std::vector<std::uint32_t> list_count_;
  std::vector<Timer> timers_;
  std::uint64_t stamp_ = 0;
  Counters counters_;
};

} // namespace timersim::model
