// FiredTimer::ahead, checked the same way for every queue that gives it.
#pragma once

#include "wheel/core/timer_queue.hpp"

#include <doctest/doctest.h>

#include <cstddef>
#include <vector>

namespace timersim::test {

// Ticks q one jiffy at a time up to `end`, running each due softirq whole or
// one expiry at a time (`bounded`), and checks that every hint names a timer
// the same run fires later: it is for a simulator's prefetch, so it must
// never point back at one that already ran. `fires` timers must fire, and
// at least one hint must be given.
template <class Q>
void check_fire_hints(Q& q, Jiffies end, bool bounded, std::size_t fires) {
  std::vector<FiredTimer> fired;
  const auto take = [&](const FiredTimer& f) { fired.push_back(f); };
  for (Jiffies j = q.jiffies() + 1; j <= end; ++j) {
    q.set_jiffies(j);
    if (!q.softirq_due()) continue;
    if (!bounded) {
      q.run_softirq(take);
      continue;
    }
    bool more = q.run_softirq(take, 1);
    while (more) more = q.resume_softirq(take, 1);
  }
  REQUIRE(fired.size() == fires);
  std::size_t hints = 0;
  for (std::size_t i = 0; i < fired.size(); ++i) {
    if (fired[i].ahead == kNoTimer) continue;
    ++hints;
    bool later = false;
    for (std::size_t k = i + 1; k < fired.size(); ++k) later = later || fired[k].id == fired[i].ahead;
    CAPTURE(i);
    CHECK(later);
  }
  CHECK(hints > 0);
  CHECK(fired.back().ahead == kNoTimer);
}

} // namespace timersim::test
