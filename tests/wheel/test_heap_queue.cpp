// HeapQueue, the exact reference: every timer runs in the first softirq with
// jiffies >= expires; among equal expiries in arm order. Checked directly and
// against a sorted std::multimap on random operation streams.
#include "wheel/core/heap_queue.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <limits>
#include <map>
#include <optional>
#include <random>
#include <vector>

using namespace timersim;

namespace {

#if defined(__OPTIMIZE__)
constexpr int kOps = 4000; // per random stream
#else
constexpr int kOps = 1500; // unoptimised (debug / sanitizer) builds
#endif

struct Fired {
  TimerId id;
  Jiffies expires;
  Jiffies base_clk;
  Jiffies at;
  bool operator==(const Fired&) const = default;
};

template <class Q>
auto recorder(const Q& q, std::vector<Fired>& log) {
  return [&q, &log](const FiredTimer& f) { log.push_back({f.id, f.expires, f.base_clk, q.jiffies()}); };
}

HeapQueue heap_at(Jiffies start) { return HeapQueue(HeapQueue::Config{.hz = 250, .start_jiffies = start}); }

std::vector<TimerId> ids_of(const std::vector<Fired>& log) {
  std::vector<TimerId> out;
  for (const Fired& f : log) out.push_back(f.id);
  return out;
}

// The heap shape, read through placement(): slot = heap position, and no
// child may come before its parent.
void check_heap_shape(const HeapQueue& q, TimerId ids_end) {
  std::map<unsigned, Placement> by_pos;
  for (TimerId id = 0; id < ids_end; ++id) {
    const Placement p = q.placement(id);
    if (p.pending) by_pos[p.slot] = p;
  }
  REQUIRE(by_pos.size() == q.pending());
  for (const auto& [pos, p] : by_pos) {
    CHECK(pos < q.pending());
    CHECK(p.bucket_expiry == p.expires);
    if (pos == 0) continue;
    CHECK_FALSE(time_before(p.expires, by_pos.at((pos - 1) / 2).expires));
  }
}

// The model: a multimap keyed by (expires - origin) as a signed distance;
// equal keys keep insertion order, which is the heap's FIFO rule.
class MultimapModel {
public:
  explicit MultimapModel(Jiffies start) : origin_(start - (Jiffies{1} << 40)), jiffies_(start) {}

  Jiffies jiffies() const { return jiffies_; }
  void set_jiffies(Jiffies j) { jiffies_ = j; }
  bool pending(TimerId id) const { return where_.count(id) != 0; }

  ArmOutcome arm(TimerId id, Jiffies e, ArmCall call) {
    if (!pending(id) && call == ArmCall::mod_timer_pending) return ArmOutcome::not_pending;
    cancel(id);
    where_[id] = queue_.emplace(key(e), id);
    expires_[id] = e;
    return ArmOutcome::queued;
  }
  bool cancel(TimerId id) {
    auto it = where_.find(id);
    if (it == where_.end()) return false;
    queue_.erase(it->second);
    where_.erase(it);
    return true;
  }
  template <class F>
  void run(F&& on_fire) {
    while (!queue_.empty() && queue_.begin()->first <= key(jiffies_)) {
      const TimerId id = queue_.begin()->second;
      queue_.erase(queue_.begin());
      where_.erase(id);
      on_fire(FiredTimer{id, expires_[id], expires_[id]});
    }
  }
  std::optional<Jiffies> next() const {
    if (queue_.empty()) return std::nullopt;
    const Jiffies e = expires_.at(queue_.begin()->second);
    return time_before_eq(e, jiffies_) ? jiffies_ : e;
  }
  std::size_t size() const { return queue_.size(); }

private:
  std::int64_t key(Jiffies e) const { return jiffies_diff(e, origin_); }
  Jiffies origin_;
  Jiffies jiffies_;
  std::multimap<std::int64_t, TimerId> queue_;
  std::map<TimerId, std::multimap<std::int64_t, TimerId>::iterator> where_;
  std::map<TimerId, Jiffies> expires_;
};

} // namespace

TEST_CASE("heap: every timer fires at exactly its expiry jiffy") {
  const Jiffies start = 4294892296; // INITIAL_JIFFIES at HZ 250
  HeapQueue q = heap_at(start);
  std::mt19937_64 rng(7);
  std::vector<TimerId> ids;
  std::vector<Jiffies> expiries;
  for (int i = 0; i < 300; ++i) {
    ids.push_back(q.create());
    expiries.push_back(start + 1 + rng() % 5000);
    CHECK(q.arm(ids.back(), expiries.back()) == ArmOutcome::queued);
  }
  std::vector<Fired> log;
  tick_to(q, start + 6000, recorder(q, log));
  REQUIRE(log.size() == ids.size());
  for (const Fired& f : log) {
    CHECK(f.at == expiries[f.id]);
    CHECK(f.base_clk == expiries[f.id]);
    CHECK(f.expires == expiries[f.id]);
  }
  CHECK(std::is_sorted(log.begin(), log.end(), [](const Fired& a, const Fired& b) { return a.at < b.at; }));
  CHECK(q.pending() == 0);
  CHECK(q.counters().expired == 300);
}

TEST_CASE("heap: expiries at or before jiffies fire in the next softirq") {
  HeapQueue q = heap_at(1000);
  const TimerId a = q.create(), b = q.create(), c = q.create();
  q.arm(a, 1000);
  q.arm(b, 900);
  q.arm(c, 1001);
  CHECK(q.softirq_due());
  CHECK(q.next_timer_interrupt() == Jiffies{1000});
  std::vector<Fired> log;
  wake_at(q, 1000, recorder(q, log)); // the softirq of the current jiffy
  CHECK(ids_of(log) == std::vector<TimerId>{b, a});
  CHECK(log[0].base_clk == 900);
  CHECK(log[0].at == 1000);
  CHECK_FALSE(q.softirq_due());
  CHECK(q.next_timer_interrupt() == Jiffies{1001});
  tick_to(q, 1001, recorder(q, log));
  CHECK(ids_of(log) == std::vector<TimerId>{b, a, c});
  CHECK(q.next_timer_interrupt() == std::nullopt);
}

TEST_CASE("heap: FIFO among equal expiries; a re-arm goes to the back") {
  HeapQueue q = heap_at(0);
  std::vector<TimerId> ids;
  for (int i = 0; i < 6; ++i) {
    ids.push_back(q.create());
    q.arm(ids.back(), 50);
  }
  // Re-arming with the same expiry is a fresh arm (the heap has no shortcut).
  CHECK(q.arm(ids[1], 50) == ArmOutcome::queued);
  CHECK(q.arm(ids[0], 50, ArmCall::mod_timer_pending) == ArmOutcome::queued);
  std::vector<Fired> log;
  tick_to(q, 50, recorder(q, log));
  CHECK(ids_of(log) == std::vector<TimerId>{ids[2], ids[3], ids[4], ids[5], ids[1], ids[0]});
}

TEST_CASE("heap: cancel from the middle, re-arm, mod_timer_pending") {
  HeapQueue q = heap_at(1u << 20);
  const Jiffies base = 1u << 20;
  std::mt19937_64 rng(11);
  std::vector<TimerId> ids;
  std::map<TimerId, Jiffies> expect;
  for (int i = 0; i < 200; ++i) {
    ids.push_back(q.create());
    const Jiffies e = base + 1 + rng() % 1000;
    q.arm(ids.back(), e);
    expect[ids.back()] = e;
  }
  check_heap_shape(q, 200);
  // Cancel timers wherever they sit in the heap.
  int from_middle = 0;
  for (int i = 0; i < 200; i += 3) {
    const unsigned pos = q.placement(ids[i]).slot;
    if (pos != 0 && pos + 1 != q.pending()) ++from_middle;
    CHECK(q.cancel(ids[i]));
    CHECK_FALSE(q.cancel(ids[i]));
    expect.erase(ids[i]);
    check_heap_shape(q, 200);
  }
  CHECK(from_middle > 30);
  // Re-arm some, earlier and later.
  for (int i = 1; i < 200; i += 7) {
    if (i % 3 == 0) continue; // cancelled above
    const Jiffies e = i % 2 ? base + 2 : base + 5000 + i;
    CHECK(q.arm(ids[i], e, ArmCall::mod_timer_pending) == ArmOutcome::queued);
    expect[ids[i]] = e;
  }
  CHECK(q.arm(ids[0], base + 10, ArmCall::mod_timer_pending) == ArmOutcome::not_pending);
  CHECK_FALSE(q.is_pending(ids[0]));
  check_heap_shape(q, 200);
  CHECK(q.pending() == expect.size());

  std::vector<Fired> log;
  tick_to(q, base + 6000, recorder(q, log));
  REQUIRE(log.size() == expect.size());
  for (const Fired& f : log) {
    REQUIRE(expect.count(f.id) == 1);
    CHECK(f.at == expect[f.id]);
  }
  // Each fired once.
  std::vector<TimerId> fired = ids_of(log);
  std::sort(fired.begin(), fired.end());
  CHECK(std::adjacent_find(fired.begin(), fired.end()) == fired.end());
}

TEST_CASE("heap: jiffies wraparound at 2^64") {
  const Jiffies start = std::numeric_limits<Jiffies>::max() - 100;
  HeapQueue q = heap_at(start);
  const TimerId before = q.create(), after = q.create(), at0 = q.create();
  q.arm(after, 50);        // after the wrap
  q.arm(at0, 0);           // exactly at the wrap
  q.arm(before, start + 7); // before it
  CHECK(q.next_timer_interrupt() == start + 7);
  std::vector<Fired> log;
  tick_to(q, 60, recorder(q, log));
  REQUIRE(ids_of(log) == std::vector<TimerId>{before, at0, after});
  CHECK(log[0].at == start + 7);
  CHECK(log[1].at == 0);
  CHECK(log[2].at == 50);
}

TEST_CASE("heap: random streams against a sorted std::multimap") {
  const Jiffies starts[] = {0, 4294967296 - 2000, std::numeric_limits<Jiffies>::max() - 2000, 4294667296};
  for (std::uint64_t seed = 1; seed <= 8; ++seed) {
    const Jiffies start = starts[seed % 4];
    CAPTURE(seed);
    std::mt19937_64 rng(seed * 1000003);
    HeapQueue q = heap_at(start);
    MultimapModel m(start);
    const unsigned n = 64;
    for (unsigned i = 0; i < n; ++i) REQUIRE(q.create() == i);
    // Callbacks: timers with id % 4 == 0 are periodic; id % 4 == 1 cancel
    // their neighbour; applied the same way to both sides.
    std::vector<Fired> got, want;
    std::size_t compared = 0;
    auto policy = [&](auto& side, const FiredTimer& f) {
      if (f.id % 4 == 0) side.arm(f.id, side.jiffies() + 1 + f.id % 37, ArmCall::mod_timer);
      if (f.id % 4 == 1) side.cancel((f.id + 1) % n);
    };
    auto on_q = [&](const FiredTimer& f) {
      got.push_back({f.id, f.expires, f.base_clk, q.jiffies()});
      policy(q, f);
    };
    auto on_m = [&](const FiredTimer& f) {
      want.push_back({f.id, f.expires, f.base_clk, m.jiffies()});
      policy(m, f);
    };
    for (int op = 0; op < kOps; ++op) {
      CAPTURE(op);
      const unsigned r = static_cast<unsigned>(rng() % 100);
      const TimerId id = static_cast<TimerId>(rng() % n);
      if (r < 40) {
        const Jiffies e = q.jiffies() - 20 + rng() % (r < 30 ? 200 : 20000);
        const ArmCall call = rng() % 5 == 0 ? ArmCall::mod_timer_pending : ArmCall::mod_timer;
        REQUIRE(q.arm(id, e, call) == m.arm(id, e, call));
      } else if (r < 55) {
        REQUIRE(q.cancel(id) == m.cancel(id));
      } else if (r < 90) {
        const Jiffies to = q.jiffies() + 1 + rng() % 30;
        while (time_before(m.jiffies(), to)) {
          m.set_jiffies(m.jiffies() + 1);
          m.run(on_m);
        }
        tick_to(q, to, on_q);
      } else {
        const Jiffies to = q.jiffies() + rng() % 3000;
        if (time_after(to, m.jiffies())) m.set_jiffies(to);
        m.run(on_m);
        wake_at(q, to, on_q);
      }
      // Compare what fired during this operation (earlier ops already matched).
      REQUIRE(got.size() == want.size());
      REQUIRE(std::equal(got.begin() + static_cast<std::ptrdiff_t>(compared), got.end(),
                         want.begin() + static_cast<std::ptrdiff_t>(compared)));
      compared = got.size();
      REQUIRE(q.pending() == m.size());
      REQUIRE(q.next_timer_interrupt() == m.next());
      bool same_pending = true;
      for (TimerId t = 0; t < n; ++t) same_pending = same_pending && q.is_pending(t) == m.pending(t);
      REQUIRE(same_pending);
    }
    CHECK(got.size() > static_cast<std::size_t>(kOps) / 8);
  }
}
