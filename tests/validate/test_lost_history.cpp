// Lost history in validate's replay (sim/validate/replay_ledger.hpp): the
// checks a loss leaves out, proven by a line or by a sequence the kernel
// cannot print, and the resynchronisation after it; and its classes for
// run and compare (workloads/traces/kernel/lost_history.hpp): the windows,
// the expiries left out, and that the load's cause to ask
// (KernelFireCollector::history_in_doubt()) covers every loss validate finds.
#include "sim/validate/kernel_replay.hpp"
#include "workloads/traces/kernel/kernel_fires.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include "tests/kernel_trace_lines.hpp"
#include "tests/validate/capture_text.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <sstream>
#include <string>
#include <string_view>
#include <vector>

using namespace timersim;
using namespace timersim::test; // hand-made kernel trace lines (kernel_trace_lines.hpp)

TEST_CASE("a disagreement that follows from events lost earlier is lost history once a later line proves the loss") {
    // CPU 0: timer aa is due at 31; the kernel's expiry of it is lost. Our
    // wheel keeps it, so its clock cannot move on: timer bb at jiffies 100
    // lands at level 1 in our wheel (clk 31), level 0 in the kernel's.
    // When aa is started again without a timer_cancel (line 5), the loss
    // is proven, and bb's disagreement was lost history.
    std::string t = kHz250;
    t += start(0, 1'000'000, "aa", "delayed_work_timer_fn", 4294900030, 10, 63);
    t += start(0, 1'400'000, "bb", "process_timeout", 4294900101, 1, 6);
    const std::string restart = start(0, 1'800'000, "aa", "delayed_work_timer_fn", 4294900230, 30, 7);
    const ReplayResult open = replay_kernel_trace(t, "unproven");
    REQUIRE(open.disagreements.size() == 1);
    CHECK(open.disagreements.front().cause == ReplayCause::our_clock_differs);
    CHECK(open.idx.disagree == 1);

    LostHistoryClasses classes;
    const ReplayResult r = replay_kernel_trace(t + restart, "proven", ReplayOptions{.lost_history = &classes});
    // For run and compare: one sequence, and CPU 0's window opens at bb's
    // start (jiffies 100), the first check that followed from the loss, not
    // at the restart (200).
    CHECK(classes.sequences == 1);
    CHECK(classes.lines == 0);
    REQUIRE(classes.windows.size() == 1);
    CHECK(classes.windows[0].cpu == 0);
    CHECK(classes.windows[0].from == Jiffies{4294900100});
    CHECK_FALSE(classes.windows[0].to);
    CHECK(classes.expiries.empty()); // idx checks only
    CHECK(r.disagreements.empty());
    CHECK(r.idx.disagree == 0);
    CHECK(r.idx.agree == 1);
    CHECK(r.idx.lost == 2); // bb's, and the restart's own
    CHECK(r.lost_by_reason.at("start of a pending timer without its timer_cancel (proven later)") == 1);
    REQUIRE(!r.lost.empty());
    CHECK(r.lost.front().line == 3);
}

namespace {

// The first mod_timer() of a pending timer after the workload start: a
// timer_cancel directly followed by the same timer's timer_start with the
// same timestamp (6.1 __mod_timer(): detach_if_pending(), then the enqueue).
std::uint64_t requeue_cancel_line(const std::string& text) {
    std::istringstream in(text);
    std::string l, previous;
    std::uint64_t n = 0;
    bool workload = false;
    const auto field = [](const std::string& line, std::string_view name) {
        const auto at = line.find(name);
        if (at == std::string::npos) return std::string();
        return line.substr(at + name.size(), line.find_first_of(" \n", at + name.size()) - at - name.size());
    };
    const auto stamp = [](const std::string& line) { return line.substr(0, line.find(": timer_")); };
    while (std::getline(in, l)) {
        ++n;
        if (l.find("timersim: workload start") != std::string::npos) workload = true;
        if (workload && previous.find("timer_cancel:") != std::string::npos && l.find("timer_start:") != std::string::npos &&
            field(previous, " timer=") == field(l, " timer=") && stamp(previous) == stamp(l))
            return n - 1;
        previous = l;
    }
    return 0;
}

} // namespace

TEST_CASE("a dropped timer_cancel is lost history on that CPU, not a disagreement") {
    const std::string capture = read_capture();
    const std::uint64_t cancel = requeue_cancel_line(capture);
    REQUIRE(cancel > 0);
    LostHistoryClasses classes;
    const ReplayResult r =
        replay_kernel_trace(drop_line(capture, cancel), "no-cancel.trace", ReplayOptions{.lost_history = &classes});
    // What run and compare leave out: every expiry check classed lost, and
    // a window per CPU lost, each closed by the expiry that pinned it.
    CHECK(classes.expiries.size() == r.expiry.lost);
    CHECK(classes.sequences == 1);
    CHECK(classes.lines == 0);
    REQUIRE_FALSE(classes.windows.empty());
    for (const LostHistoryClasses::Window& w : classes.windows) {
        CHECK(w.from);
        if (w.from && w.to) CHECK_FALSE(time_before(*w.to, *w.from));
    }
    CHECK(std::count_if(classes.windows.begin(), classes.windows.end(), [](const auto& w) { return w.to.has_value(); }) ==
          static_cast<std::ptrdiff_t>(r.resyncs));
    // Today's 100% stays 100% on the CPUs whose history is whole, and
    // nothing the lost stretch did is called a disagreement.
    CHECK(r.idx.disagree == 0);
    CHECK(r.expiry.disagree == 0);
    CHECK(r.disagreements.empty());
    CHECK(r.idx.lost + r.expiry.lost >= 1);
    CHECK(r.lost_by_reason.count("start of a pending timer without its timer_cancel") == 1);
    REQUIRE_FALSE(r.lost.empty());
    CHECK(r.lost.front().line == cancel); // the start right after the dropped line now has its number
    // A later agreeing expiry pins the clock again; the stretch after it is
    // counted apart and agrees too.
    CHECK(r.resyncs >= 1);
    CHECK(r.idx.resynced_agree + r.expiry.resynced_agree > 0);
    CHECK(r.idx.resynced_disagree + r.expiry.resynced_disagree == 0);
    // Every event is classed exactly once.
    for (const ReplayCheckCounts* c : {&r.idx, &r.expiry})
        CHECK(c->agree + c->disagree + c->unknown + c->lost + c->resynced_agree + c->resynced_disagree ==
              c->events);
}

TEST_CASE("a ring buffer's [LOST N EVENTS] line makes that CPU's next checks lost history until an expiry agrees") {
    const std::string capture = read_capture();
    const ReplayResult whole = replay_kernel_trace(capture, "capture.trace");
    // The marker goes in right after the workload start: CPU 0 then has
    // timers in flight whose history we pretend is incomplete.
    const std::size_t at = capture.find('\n', capture.find("timersim: workload start")) + 1;
    std::string marked = capture;
    marked.insert(at, "CPU:0 [LOST 7 EVENTS]\n");
    LostHistoryClasses classes;
    const ReplayResult r = replay_kernel_trace(marked, "lost.trace", ReplayOptions{.lost_history = &classes});
    CHECK(classes.lines == 1);
    CHECK(classes.sequences == 0);
    REQUIRE(classes.windows.size() == 1);
    CHECK(classes.windows[0].cpu == 0);
    REQUIRE(classes.windows[0].to);
    CHECK(classes.expiries.size() == r.expiry.lost);
    REQUIRE_FALSE(classes.expiries.empty());
    CHECK(classes.expiries.back().now == *classes.windows[0].to); // the expiry that pinned it
    CHECK(r.lost_by_reason.at("ring buffer lost events") == 1);
    CHECK(r.idx.lost + r.expiry.lost >= 1);
    CHECK(r.resyncs == 1);
    CHECK(r.idx.disagree + r.expiry.disagree == 0);
    // Nothing else changes: the same events, now split three ways.
    CHECK(r.idx.agree + r.idx.lost + r.idx.resynced_agree == whole.idx.agree);
    CHECK(r.expiry.agree + r.expiry.lost + r.expiry.resynced_agree == whole.expiry.agree);
    for (const ReplayLost& l : r.lost) CHECK(l.cpu == 0);
}

TEST_CASE("a whole capture has no lost history") {
    const ReplayResult r = replay_kernel_trace(read_capture(), "capture.trace");
    CHECK(r.idx.lost == 0);
    CHECK(r.expiry.lost == 0);
    CHECK(r.lost_by_reason.empty());
    CHECK(r.resyncs == 0);
}

namespace {

// Does the load see cause to ask this replay for the trace's lost history?
bool in_doubt(const std::string& text) {
    KernelFireCollector fires;
    FtraceReader reader(std::string_view(text), "doubt.trace");
    reader.set_observer(&fires);
    FtraceEvent e;
    while (reader.next(e)) {
    }
    return fires.history_in_doubt();
}

bool finds_lost_history(const std::string& text) {
    LostHistoryClasses classes;
    replay_kernel_trace(text, "lost.trace", ReplayOptions{.lost_history = &classes});
    return classes.lines + classes.sequences + classes.resets > 0;
}

} // namespace

TEST_CASE("every trace validate finds lost history in gives the load cause to ask it") {
    const std::string capture = read_capture("capture-7.3-hz250.trace.xz");
    REQUIRE_FALSE(in_doubt(capture));
    std::vector<std::uint64_t> timer_lines;
    std::istringstream in(capture);
    std::string l;
    for (std::uint64_t n = 1; std::getline(in, l); ++n)
        if (l.find(": timer_") != std::string::npos) timer_lines.push_back(n);
    std::size_t mutated = 0, lost = 0;
    for (std::size_t i = 0; i < timer_lines.size(); i += 23) {
        const std::string text = drop_line(capture, timer_lines[i]);
        ++mutated;
        if (!finds_lost_history(text)) continue;
        ++lost;
        INFO("without line " << timer_lines[i]);
        CHECK(in_doubt(text));
    }
    CHECK(mutated > 50);
    CHECK(lost > 5); // the check is not empty
}

// Validate's stream settles a cancel at the timer's next event of any
// kind: followed by the timer's own timer_expire_exit it is no detach, it
// is applied, and the expiry after is of a timer never pending.
TEST_CASE("a cancel its timer's expire_exit follows is applied, for the load's cause as for validate") {
    const std::string t = kHz250 +
        "  <idle>-0 [000] d.s1. 0.080000: timer_start: timer=00000000000000aa function=fa expires=4294900050 [timeout=30] cpu=0 idx=19 flags=\n"
        "  <idle>-0 [000] d.s1. 0.084000: timer_start: timer=00000000000000bb function=fb expires=4294900060 [timeout=39] cpu=0 idx=29 flags=\n"
        "  <idle>-0 [000] d.s1. 0.100000: timer_cancel: timer=00000000000000aa\n"
        "  <idle>-0 [000] d.s1. 0.100001: timer_expire_exit: timer=00000000000000aa\n"
        "  <idle>-0 [000] d.s1. 0.200000: timer_expire_entry: timer=00000000000000aa function=fa now=4294900050 baseclk=4294900050\n"
        "  <idle>-0 [000] d.s1. 0.200010: timer_expire_exit: timer=00000000000000aa\n";
    CHECK(finds_lost_history(t));
    CHECK(in_doubt(t));
}

// 6.9+: a migrator's expiry of an idle CPU's timer that was never pending
// puts the idle CPU's wheel out of step, the one the expiry is checked on.
TEST_CASE("a remote expiry of a timer never pending loses the idle CPU's history, not the migrator's") {
    const std::string t = "# hz=250\n# kernel: 6.12.0\n"
        "  <idle>-0 [001] d.s1. 0.080000: timer_init: timer=00000000000000aa\n"
        "  <idle>-0 [001] d.s1. 0.080001: timer_start: timer=00000000000000bb function=fb expires=4294900060 [timeout=40] bucket_expiry=4294900061 cpu=1 idx=29 flags=\n"
        "  <idle>-0 [000] ..s1. 0.100000: softirq_entry: vec=1 [action=TIMER]\n"
        "  <idle>-0 [000] d.s3. 0.100001: tmigr_handle_remote_cpu: cpu=1 parent=00000000b503d1a4 wakeup=9223372036854775807\n"
        "  <idle>-0 [000] d.s1. 0.100002: timer_expire_entry: timer=00000000000000aa function=fa now=4294900025 baseclk=4294900025\n"
        "  <idle>-0 [000] d.s1. 0.100003: timer_expire_exit: timer=00000000000000aa\n"
        "  <idle>-0 [000] ..s1. 0.100010: softirq_exit: vec=1 [action=TIMER]\n"
        "  <idle>-0 [001] d.s1. 0.180000: timer_expire_entry: timer=00000000000000bb function=fb now=4294900060 baseclk=4294900060\n"
        "  <idle>-0 [001] d.s1. 0.180003: timer_expire_exit: timer=00000000000000bb\n";
    LostHistoryClasses classes;
    const ReplayResult r = replay_kernel_trace(t, "remote.trace", ReplayOptions{.lost_history = &classes});
    REQUIRE(classes.windows.size() == 1);
    CHECK(classes.windows[0].cpu == 1);
    CHECK(r.disagreements.empty()); // CPU 1's checks are lost history
    CHECK(r.expiry.lost == 2);
    CHECK(in_doubt(t));
}

// A loss proven later reaches back before the CPU's first window: that
// window starts earlier, and the CPU's windows stay in jiffies order and
// disjoint (KernelFireIndex::in_lost_history() searches them so).
TEST_CASE("a loss proven later moves the CPU's first lost window back, not a new one before it") {
    const std::string t = kHz250 +
        "  <idle>-0 [000] d.s1. 0.080000: timer_start: timer=00000000000000aa function=fa expires=4294901020 [timeout=1000] cpu=0 idx=181 flags=\n"
        "  <idle>-0 [000] d.s1. 0.120000: timer_start: timer=00000000000000dd function=fd expires=4294900050 [timeout=20] cpu=0 idx=500 flags=\n"
        "  <idle>-0 [000] d.s1. 0.124000: timer_start: timer=00000000000000bb function=fh expires=4294900035 [timeout=4] cpu=0 idx=4 flags=\n"
        "CPU:0 [LOST 1 EVENTS]\n"
        "  <idle>-0 [000] d.s1. 0.168000: timer_start: timer=00000000000000ee function=fe expires=4294900045 [timeout=3] cpu=0 idx=14 flags=\n"
        "  <idle>-0 [000] d.s1. 0.184000: timer_cancel: timer=00000000000000ee\n"
        "  <idle>-0 [000] d.s1. 0.184001: timer_expire_entry: timer=00000000000000ee function=fe now=4294900046 baseclk=4294900046\n"
        "  <idle>-0 [000] d.s1. 0.184002: timer_expire_exit: timer=00000000000000ee\n"
        "  <idle>-0 [000] d.s1. 0.240000: timer_start: timer=00000000000000aa function=fa expires=4294901060 [timeout=1000] cpu=0 idx=182 flags=\n";
    LostHistoryClasses classes;
    const ReplayResult r = replay_kernel_trace(t, "reclass.trace", ReplayOptions{.lost_history = &classes});
    CHECK(r.lost_by_reason.count("start of a pending timer without its timer_cancel (proven later)") == 1);
    CHECK(classes.lines == 1);
    CHECK(classes.sequences == 1);
    REQUIRE(classes.windows.size() == 2);
    // The marker's window (opened at bb's jiffies, 4294900031), resynchronised
    // by fe's expiry, now from dd's start (4294900030), the disagreement the
    // restart reclassed.
    CHECK(classes.windows[0].from == Jiffies{4294900030});
    CHECK(classes.windows[0].to == Jiffies{4294900046});
    // The restart's, after it.
    REQUIRE(classes.windows[1].from);
    CHECK(time_after(*classes.windows[1].from, *classes.windows[0].to));
    CHECK_FALSE(classes.windows[1].to);
}
