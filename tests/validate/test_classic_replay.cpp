// validate on a kernel before 4.8 (sim/validate/classic_replay.hpp): small
// hand-made traces in 3.x's format (timer_start: timer, function, expires;
// timer_expire_entry: timer, function, now) where the answer is known: a
// cascade from tv2 that agrees, the order of one step's timers (oldest
// first before 4.2, newest first from 4.2), an expiry our wheel does not
// fire, an expiry of a timer armed before the trace, lost events, and the
// target CPU 4.2-4.7 show in their flags word.
#include "sim/validate/kernel_replay.hpp"

#include "tests/kernel_trace_lines.hpp"

#include <doctest/doctest.h>

#include <string>
#include <string_view>

using namespace timersim;
using namespace timersim::test;

namespace {

std::string header(std::string_view release) { return fmt::format("# hz=250\n# kernel: {}\n", release); }

// Times follow the jiffies at HZ 250 (4 ms each), `us` microseconds after
// jiffy `now` began.
std::uint64_t at(Jiffies now, std::uint64_t us = 0) { return now * 4000 + us; }

// 3.x timer_start: no cpu=, idx= or flags.
std::string start3(unsigned cpu, Jiffies now, std::string_view timer, Jiffies expires, std::uint64_t us = 0) {
    return ev(cpu, at(now, us),
              fmt::format("timer_start: timer={} function=cb_{} expires={} [timeout={}]", address(timer), timer,
                          expires, static_cast<std::int64_t>(expires - now)));
}
// 4.2-4.7 timer_start: the whole flags word (its low bits the CPU).
std::string start4(unsigned cpu, Jiffies now, std::string_view timer, Jiffies expires, std::uint32_t flags,
                   std::uint64_t us = 0) {
    return ev(cpu, at(now, us),
              fmt::format("timer_start: timer={} function=cb_{} expires={} [timeout={}] flags=0x{:08x}",
                          address(timer), timer, expires, static_cast<std::int64_t>(expires - now), flags));
}
// 3.6 __run_timers(): the detach (timer_cancel), then the callback.
std::string expiry3(unsigned cpu, Jiffies now, std::string_view timer, std::uint64_t us = 0) {
    return cancel(cpu, at(now, us), timer) +
           ev(cpu, at(now, us + 1),
              fmt::format("timer_expire_entry: timer={} function=cb_{} now={}", address(timer), timer, now)) +
           expire_exit(cpu, at(now, us + 2), timer);
}

ReplayResult validate(const std::string& text) { return replay_kernel_trace(text, "classic.trace"); }

// aa is armed 300 jiffies ahead (tv2), bb 10 ahead once the cascade at
// 1280 brought aa down to tv1: both run in step 1300, in the order given.
std::string cascade_then_direct(std::string_view release, bool aa_first) {
    std::string t = header(release) + start3(0, 1000, "aa", 1300) + start3(0, 1290, "bb", 1300) +
                    start3(0, 1295, "cc", 1600);
    t += aa_first ? expiry3(0, 1300, "aa") + expiry3(0, 1300, "bb", 10)
                  : expiry3(0, 1300, "bb") + expiry3(0, 1300, "aa", 10);
    return t;
}

} // namespace

TEST_CASE("classic validate: a timer cascaded from tv2 fires on the kernel's jiffy, in 3.6's order") {
    const ReplayResult r = validate(cascade_then_direct("3.6.11-1-ARCH", true));
    CHECK(r.kernel_classic);
    CHECK(r.classic_oldest_first);
    CHECK(r.idx.events == 3);
    CHECK(r.idx.agree + r.idx.disagree == 0); // no idx to check
    CHECK(r.expiry.events == 2);
    CHECK(r.expiry.agree == 2);
    CHECK(r.expiry.disagree == 0);
    CHECK(r.cascaded_agree == 1); // aa came down from tv2
    CHECK(r.disagreements.empty());
}

TEST_CASE("classic validate: the order of one step's timers is checked (oldest first before 4.2)") {
    // 3.6: aa (cascaded in first) runs before bb; a trace that shows bb
    // first disagrees once: our run fired aa before the kernel's bb.
    const ReplayResult r = validate(cascade_then_direct("3.6.11-1-ARCH", false));
    CHECK(r.expiry.agree == 1);
    REQUIRE(r.expiry.disagree == 1);
    REQUIRE(r.disagreements.size() == 1);
    CHECK(r.disagreements[0].timer == 0xaa);
    CHECK(r.disagreements[0].cause == ReplayCause::order_differs);
    CHECK(r.disagreements_by_cause.at("fired in another order by our run") == 1);
}

TEST_CASE("classic validate: from 4.2 a step's timers run newest first") {
    // The same arms with 4.4's flags word (CPU 0): bb, queued last, runs first.
    std::string t = header("4.4.0-1-amd64") + start4(0, 1000, "aa", 1300, 0) +
                    start4(0, 1290, "bb", 1300, 0) + expiry3(0, 1300, "bb") + expiry3(0, 1300, "aa", 10);
    const ReplayResult r = validate(t);
    CHECK(r.kernel_classic);
    CHECK_FALSE(r.classic_oldest_first);
    CHECK(r.expiry.agree == 2);
    CHECK(r.expiry.disagree == 0);
}

TEST_CASE("classic validate: an expiry our wheel does not fire then is a disagreement") {
    // aa is due at 1300; the kernel shows it expiring at 1250.
    const std::string t = header("3.6.11-1-ARCH") + start3(0, 1000, "aa", 1300) + expiry3(0, 1250, "aa");
    const ReplayResult r = validate(t);
    REQUIRE(r.disagreements.size() == 1);
    CHECK(r.disagreements[0].cause == ReplayCause::not_due);
    CHECK(r.disagreements[0].ours == "pending in tv2 slot 5, runs at step 1300");
    CHECK(r.disagreements[0].kernel == "now 1250");
    CHECK(r.expiry.agree == 0);
}

TEST_CASE("classic validate: a timer due earlier in our wheel than the kernel's run disagrees") {
    // aa due at 1100, bb at 1200; the kernel runs bb at 1200 first, aa after.
    const std::string t = header("3.6.11-1-ARCH") + start3(0, 1000, "aa", 1100) +
                          start3(0, 1001, "bb", 1200) + expiry3(0, 1200, "bb") + expiry3(0, 1210, "aa");
    const ReplayResult r = validate(t);
    CHECK(r.expiry.agree == 1);
    REQUIRE(r.disagreements.size() == 1);
    CHECK(r.disagreements[0].timer == 0xaa);
    CHECK(r.disagreements[0].cause == ReplayCause::fired_earlier);
}

TEST_CASE("classic validate: a timer armed before the trace is unknown history, never guessed") {
    // dd expires with no timer_start before it; its callback re-arms it,
    // and that expiry is checked.
    const std::string t = header("3.6.11-1-ARCH") + start3(0, 1000, "aa", 1010) + expiry3(0, 1005, "dd") +
                          start3(0, 1005, "dd", 1008, 5) + expiry3(0, 1008, "dd") + expiry3(0, 1010, "aa");
    const ReplayResult r = validate(t);
    CHECK(r.expiry.events == 3);
    CHECK(r.expiry.unknown == 1);
    CHECK(r.unknown_by_reason.at("expiry of a timer the trace never showed armed") == 1);
    CHECK(r.expiry.agree == 2);
    CHECK(r.expiry.disagree == 0);
}

TEST_CASE("classic validate: after lost events a CPU's checks are lost history until one agrees") {
    const std::string t = header("3.6.11-1-ARCH") + start3(0, 1000, "aa", 1010) + start3(0, 1001, "bb", 1020) +
                          "CPU:0 [LOST 7 EVENTS]\n" + expiry3(0, 1010, "aa") + expiry3(0, 1020, "bb");
    const ReplayResult r = validate(t);
    CHECK(r.expiry.lost == 1); // aa: excluded, and it agrees: the CPU is in step again
    CHECK(r.resyncs == 1);
    CHECK(r.expiry.resynced_agree == 1);
    CHECK(r.expiry.agree == 0);
    CHECK(r.lost_by_reason.at("ring buffer lost events") == 1);
}

TEST_CASE("classic validate: 4.2-4.7 flags words give the target CPU") {
    // CPU 0 arms aa for CPU 1 (flags 0x00000001), bb for CPU 0 (add_timer_on
    // style), and cc deferrable on CPU 1 (4.2's TIMER_DEFERRABLE, 0x00100000).
    const std::string t = header("4.4.0-1-amd64") + start4(0, 1000, "aa", 1010, 0x1) +
                          start4(0, 1001, "bb", 1010, 0x0) + start4(0, 1002, "cc", 1012, 0x00100001) +
                          expiry3(1, 1010, "aa") + expiry3(1, 1010, "bb", 10) + expiry3(1, 1012, "cc");
    const ReplayResult r = validate(t);
    CHECK(r.expiry.agree == 2);
    REQUIRE(r.disagreements.size() == 1);
    CHECK(r.disagreements[0].timer == 0xbb);
    CHECK(r.disagreements[0].cause == ReplayCause::other_cpu);
}

TEST_CASE("classic validate: a wheel far behind the trace's jiffies re-places its timers, not walking each jiffy") {
    // aa is queued 2^28 jiffies ahead (tv5); the trace then jumps 10^8
    // jiffies: walking them step by step would take many seconds, so the wheel
    // re-places aa from there, and its history is lost until an expiry agrees.
    const Jiffies far = 100'001'000;
    const std::string t = header("3.6.11-1-ARCH") + start3(0, 1000, "aa", 1000 + (Jiffies{1} << 28)) +
                          start3(0, far - 10, "bb", far) + expiry3(0, far, "bb") + start3(0, far, "cc", far + 5, 10) +
                          expiry3(0, far + 5, "cc");
    const ReplayResult r = validate(t);
    CHECK(r.lost_by_reason.at("our wheel more than 2^20 jiffies behind the trace: its timers re-placed") == 1);
    CHECK(r.expiry.lost == 1); // bb, which agrees: in step again
    CHECK(r.resyncs == 1);
    CHECK(r.expiry.resynced_agree == 1);
    CHECK(r.expiry.disagree + r.expiry.resynced_disagree == 0);
}
