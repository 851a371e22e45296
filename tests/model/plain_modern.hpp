// PlainModern: a deliberately plain model of one CPU's Linux 6.1 timer bases
// (kernel/time/timer.c, the non-cascading wheel), written from the rules in
// /work/shared/reference/kernel-timer-wheels.md §3 and checked against the
// 6.1 source, for the differential test. It shares no code with
// wheel/modern_wheel.*: there are no buckets, no bitmap and no lists, only a
// vector of timers that is scanned whenever something has to be found.
//
// Each pending timer records the kernel's bucket number (idx), its level, its
// bucket expiry B and the sequence number of its enqueue. The rules, stated
// plainly:
//   * placement (§3.2): the level is the first L with delta < LVL_START(L+1)
//     (delta = E - clk); B is the next multiple of 8^L strictly after E;
//     idx = 64L + (B / 8^L) mod 64. A negative delta goes to idx clk mod 64
//     with B = clk; a delta at or beyond the cutoff is placed as if E were
//     clk + WHEEL_TIMEOUT_MAX.
//   * next_expiry is lazy (§3.3, §3.6): enqueue only moves it earlier; a
//     delete that empties a bucket only raises a "recalc" flag; it is
//     recomputed after each collected clock and on idle entry, as the minimum
//     B over the timers still sitting in a bucket (§3.7 says this is what the
//     bitmap search returns), or clk + 2^30 - 1 if there are none.
//   * forward_timer_base (§3.4) before every index computation.
//   * __mod_timer (§3.5): same expires -> nothing; same idx -> only expires
//     changes; otherwise dequeue + enqueue. mod_timer_pending on an idle
//     timer forwards the base and does nothing else.
//   * a softirq run (§3.6): while jiffies >= clk and jiffies >= next_expiry:
//     clk jumps to next_expiry = c; at level L the bucket 64L + (c >> 3L) mod
//     64 is collected while the lower 3L bits of c are zero; clk = c + 1;
//     next_expiry is recomputed; the collected timers run ordered by level
//     descending, then enqueue sequence descending (hlist_add_head = LIFO).
//     A collected timer that a callback cancels or moves does not run; one
//     that a callback re-arms into the same idx stays collected and runs.
//     The reported base_clk is clk - 1 read when a level starts running (the
//     6.1 trace "baseclk"): c, unless a callback forwarded clk meanwhile.
#pragma once

#include "wheel/core/jiffies.hpp"
#include "wheel/core/timer_queue.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <vector>

namespace timersim::model {

class PlainModern {
public:
  static constexpr std::string_view name = "plain-modern";

  struct Config {
    unsigned hz = 250;
    Jiffies start_jiffies = 0;
    bool deferrable_base = true;
  };

  struct BaseState {
    Jiffies clk = 0;
    Jiffies next_expiry = 0;
    bool recalc = false;
    bool timers_pending = false;
    bool is_idle = false;
    std::size_t queued = 0;
  };

  struct Counters {
    std::uint64_t enqueues = 0;
    std::uint64_t same_expiry_shortcuts = 0;
    std::uint64_t same_bucket_shortcuts = 0;
    std::uint64_t cancels = 0;
    std::uint64_t expired = 0;
    std::uint64_t softirq_runs = 0;
    std::uint64_t empty_runs = 0;
    // Model self-check: a collected timer whose recorded B is not the
    // collected clock (would mean the model's own rules disagree).
    std::uint64_t inconsistencies = 0;
  };

  // Level thresholds LVL_START(L) as listed in the reference §3.1.
  static constexpr Jiffies kLevelStart[10] = {0,       63,       504,       4032,      32256,
                                              258048,  2064384,  16515072,  132120576, 1056964608};
  static constexpr Jiffies kMaxDelta = (Jiffies{1} << 30) - 1; // NEXT_TIMER_MAX_DELTA

  struct Index {
    unsigned idx;
    unsigned level;
    Jiffies bucket_expiry;
  };

  explicit PlainModern(Config c)
      : depth_(c.hz > 100 ? 9 : 8), def_enabled_(c.deferrable_base), jiffies_(c.start_jiffies) {
    for (auto& b : bases_) {
      b.clk = jiffies_;
      b.next_expiry = jiffies_ + kMaxDelta;
    }
  }

  unsigned depth() const { return depth_; }

  static Jiffies gran(unsigned level) { return Jiffies{1} << (3 * level); }

  // §3.2, in the model's own words.
  static Index place(Jiffies expires, Jiffies clk, unsigned depth) {
    const Jiffies delta = expires - clk;
    const Jiffies cutoff = kLevelStart[depth];
    const Jiffies wheel_max = cutoff - gran(depth - 1);
    unsigned level = depth - 1;
    for (unsigned l = 0; l + 1 < depth; ++l) {
      if (delta < kLevelStart[l + 1]) {
        level = l;
        break;
      }
    }
    Jiffies x = expires;
    if (level == depth - 1) {
      if (static_cast<std::int64_t>(delta) < 0) return Index{static_cast<unsigned>(clk % 64), 0, clk};
      if (delta >= cutoff) x = clk + wheel_max;
    }
    const Jiffies g = gran(level);
    const Jiffies bucket = x / g + 1; // the next multiple of g strictly after x, in units of g
    return Index{64 * level + static_cast<unsigned>(bucket % 64), level, bucket * g};
  }

  TimerId create(TimerFlags f = {}) {
    Timer t;
    t.deferrable = f.deferrable;
    timers_.push_back(t);
    return static_cast<TimerId>(timers_.size() - 1);
  }

  Jiffies jiffies() const { return jiffies_; }
  void set_jiffies(Jiffies j) {
    if (time_before(j, jiffies_)) throw std::invalid_argument("jiffies cannot go backwards");
    jiffies_ = j;
  }

  bool softirq_due() const {
    if (time_after_eq(jiffies_, bases_[0].next_expiry)) return true;
    return def_enabled_ && time_after_eq(jiffies_, bases_[1].next_expiry);
  }

  ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) {
    Timer& t = timers_.at(id);
    const unsigned b = t.deferrable && def_enabled_ ? 1 : 0;
    if (t.state != State::idle) {
      if (t.expires == expires) {
        ++counters_.same_expiry_shortcuts;
        return ArmOutcome::same_expiry;
      }
      forward(bases_[b]);
      const Index ix = place(expires, bases_[b].clk, depth_);
      if (ix.idx == t.idx) {
        t.expires = expires;
        ++counters_.same_bucket_shortcuts;
        return ArmOutcome::same_bucket;
      }
      detach(id);
      t.expires = expires;
      enqueue(id, b, ix);
      return ArmOutcome::queued;
    }
    forward(bases_[b]);
    if (call == ArmCall::mod_timer_pending) return ArmOutcome::not_pending;
    t.expires = expires;
    enqueue(id, b, place(expires, bases_[b].clk, depth_));
    return ArmOutcome::queued;
  }

  bool cancel(TimerId id) {
    if (timers_.at(id).state == State::idle) return false;
    detach(id);
    ++counters_.cancels;
    return true;
  }

  template <class F>
  void run_softirq(F&& on_fire) {
    ++counters_.softirq_runs;
    run_base(0, on_fire);
    if (def_enabled_) run_base(1, on_fire);
  }

  // 6.1 get_next_timer_interrupt() on the standard base.
  std::optional<Jiffies> next_timer_interrupt() {
    BaseState& b = bases_[0];
    const Jiffies basej = jiffies_;
    if (b.recalc) recompute(0);
    const Jiffies next = b.next_expiry;
    if (time_after(basej, b.clk)) {
      if (time_after(next, basej))
        b.clk = basej;
      else if (time_after(next, b.clk))
        b.clk = next;
    }
    if (time_before_eq(next, basej)) {
      b.is_idle = false;
      return basej;
    }
    if (!b.timers_pending) {
      b.is_idle = true; // KTIME_MAX is more than a tick away
      return std::nullopt;
    }
    if (next - basej > 1) b.is_idle = true; // never cleared here
    return next;
  }

  void clear_idle() { bases_[0].is_idle = false; } // timer_clear_idle() on idle exit

  bool is_pending(TimerId id) const { return timers_.at(id).state != State::idle; }
  std::size_t pending() const { return bases_[0].queued + bases_[1].queued; }

  Placement placement(TimerId id) const {
    const Timer& t = timers_.at(id);
    Placement p;
    p.pending = t.state != State::idle;
    p.expires = t.expires;
    if (!p.pending) return p;
    p.deferrable_base = t.base == 1;
    p.level = t.level;
    p.slot = t.idx;
    p.bucket_expiry = t.bucket_expiry;
    return p;
  }

  const BaseState& base(unsigned b) const { return bases_[b]; }
  const Counters& counters() const { return counters_; }

private:
  enum class State : std::uint8_t { idle, bucket, collected };

  struct Timer {
    bool deferrable = false;
    State state = State::idle;
    unsigned base = 0;
    unsigned idx = 0;
    unsigned level = 0;
    Jiffies expires = 0;
    Jiffies bucket_expiry = 0;
    std::uint64_t seq = 0;
  };

  void forward(BaseState& b) {
    if (static_cast<std::int64_t>(jiffies_ - b.clk) < 1) return;
    if (time_after(b.next_expiry, jiffies_))
      b.clk = jiffies_;
    else if (!time_before(b.next_expiry, b.clk))
      b.clk = b.next_expiry;
  }

  void enqueue(TimerId id, unsigned b, const Index& ix) {
    Timer& t = timers_[id];
    t.state = State::bucket;
    t.base = b;
    t.idx = ix.idx;
    t.level = ix.level;
    t.bucket_expiry = ix.bucket_expiry;
    t.seq = ++seq_;
    ++bases_[b].queued;
    ++counters_.enqueues;
    BaseState& base = bases_[b];
    if (time_before(ix.bucket_expiry, base.next_expiry)) {
      base.next_expiry = ix.bucket_expiry;
      base.timers_pending = true;
      base.recalc = false;
    }
  }

  void detach(TimerId id) {
    Timer& t = timers_[id];
    if (t.state == State::bucket) {
      bool alone = true;
      for (TimerId o = 0; o < timers_.size(); ++o)
        if (o != id && timers_[o].state == State::bucket && timers_[o].base == t.base &&
            timers_[o].idx == t.idx)
          alone = false;
      if (alone) bases_[t.base].recalc = true;
    }
    t.state = State::idle;
    --bases_[t.base].queued;
  }

  void recompute(unsigned b) {
    BaseState& base = bases_[b];
    std::optional<Jiffies> best;
    for (const Timer& t : timers_)
      if (t.state == State::bucket && t.base == b && (!best || time_before(t.bucket_expiry, *best)))
        best = t.bucket_expiry;
    base.next_expiry = best ? *best : base.clk + kMaxDelta;
    base.timers_pending = best.has_value();
    base.recalc = false;
  }

  template <class F>
  void run_base(unsigned b, F& on_fire) {
    BaseState& base = bases_[b];
    if (time_before(jiffies_, base.next_expiry)) return;
    while (time_after_eq(jiffies_, base.clk) && time_after_eq(jiffies_, base.next_expiry)) {
      const Jiffies c = base.clk = base.next_expiry;
      std::vector<TimerId> run;
      Jiffies lc = c;
      for (unsigned level = 0; level < depth_; ++level) {
        const unsigned idx = 64 * level + static_cast<unsigned>(lc % 64);
        for (TimerId id = 0; id < timers_.size(); ++id) {
          Timer& t = timers_[id];
          if (t.state == State::bucket && t.base == b && t.idx == idx) {
            if (t.bucket_expiry != c) ++counters_.inconsistencies;
            t.state = State::collected;
            run.push_back(id);
          }
        }
        if (lc % 8 != 0) break;
        lc /= 8;
      }
      if (run.empty()) ++counters_.empty_runs;
      base.clk = c + 1;
      recompute(b);
      std::sort(run.begin(), run.end(), [&](TimerId x, TimerId y) {
        if (timers_[x].level != timers_[y].level) return timers_[x].level > timers_[y].level;
        return timers_[x].seq > timers_[y].seq;
      });
      // One level at a time, like 6.1 expire_timers(), which reads its trace
      // "baseclk" as clk - 1 when it starts on a level. Normally that is c;
      // in a late run a callback of a higher level may have forwarded clk
      // (arming forwards the base), and the lower levels then report the
      // forwarded value.
      unsigned level = depth_;
      Jiffies base_clk = c;
      for (TimerId id : run) {
        Timer& t = timers_[id];
        if (t.level != level) {
          level = t.level;
          base_clk = base.clk - 1;
        }
        if (t.state != State::collected) continue; // cancelled or moved by a callback
        t.state = State::idle;
        --base.queued;
        ++counters_.expired;
        on_fire(FiredTimer{id, t.expires, base_clk});
      }
    }
  }

  unsigned depth_;
  bool def_enabled_;
  Jiffies jiffies_;
  BaseState bases_[2];
  std::vector<Timer> timers_;
  std::uint64_t seq_ = 0;
  Counters counters_;
};

} // namespace timersim::model
