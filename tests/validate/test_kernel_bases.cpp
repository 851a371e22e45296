// timersim validate on 6.9+ traces (sim/validate/timer_bases.hpp): three
// bases per CPU run LOCAL, GLOBAL, DEF in turn, and the expiries a migrator
// CPU prints after "tmigr_handle_remote_cpu: cpu=N" are an idle CPU N's
// global base. Small hand-made traces in the 6.12 format, each with the
// replay of the 6.1 model (the same lines without bucket_expiry=) or of a
// changed trace as the contrast that shows the rule is what decides.
#include "sim/validate/kernel_replay.hpp"
#include "wheel/kernel/modern_levels.hpp"
#include "workloads/traces/input/trace_error.hpp"

#include <doctest/doctest.h>

#include <fmt/format.h>

#include <string>

using namespace timersim;

namespace {

constexpr Jiffies kJ = 4294900000; // jiffies at the first start
constexpr unsigned kHz = 250;

std::string line(unsigned cpu, double ts, const std::string& what) {
    return fmt::format("          <idle>-0       [{:03}] d.s1. {:12.6f}: {}\n", cpu, ts, what);
}

// A 6.12 timer_start armed at jiffies `now` on base CPU `cpu`; the kernel's
// idx and bucket_expiry are calc_wheel_index()'s for a base clk at `now`.
// bucket_expiry=false prints it as 6.1 does.
std::string start(unsigned cpu, double ts, const char* timer, Jiffies now, Jiffies expires, const char* flags,
                  bool bucket_expiry = true) {
    const auto wi = modern::calc_wheel_index(expires, now, modern::depth_for_hz(kHz));
    const std::string be = bucket_expiry ? fmt::format(" bucket_expiry={}", wi.bucket_expiry) : "";
    return line(cpu, ts,
                fmt::format("timer_start: timer={} function=process_timeout expires={} [timeout={}]{} cpu={} "
                            "idx={} flags={}",
                            timer, expires, expires - now, be, cpu, wi.idx, flags));
}

// The detach and callback of an expiry printed on CPU `cpu`.
std::string expire(unsigned cpu, double ts, const char* timer, Jiffies now, Jiffies baseclk) {
    return line(cpu, ts, fmt::format("timer_cancel: timer={}", timer)) +
           line(cpu, ts + 0.000001,
                fmt::format("timer_expire_entry: timer={} function=process_timeout now={} baseclk={}", timer, now,
                            baseclk)) +
           line(cpu, ts + 0.000002, fmt::format("timer_expire_exit: timer={}", timer));
}

std::string softirq(unsigned cpu, double ts, bool entry) {
    return line(cpu, ts, fmt::format("softirq_{}: vec=1 [action=TIMER]", entry ? "entry" : "exit"));
}

// A pinned and then a global timer on CPU 0, both due kJ + 5, and their
// expiries in the kernel's (6.9) order: the pinned one first. `header`
// before the '# hz=' line; bucket_expiry= printed as 6.8+ does, or not.
std::string pinned_then_global(const std::string& header, bool bucket_expiry) {
    const Jiffies expires = kJ + 5;
    const Jiffies fired_at = modern::calc_wheel_index(expires, kJ, modern::depth_for_hz(kHz)).bucket_expiry;
    std::string t = header + "# hz=250\n";
    t += start(0, 1.000000, "00000000000000a1", kJ, expires, "P", bucket_expiry);
    t += start(0, 1.000100, "00000000000000b2", kJ, expires, "", bucket_expiry);
    t += softirq(0, 1.100000, true);
    t += expire(0, 1.100010, "00000000000000a1", fired_at, fired_at);
    t += expire(0, 1.100020, "00000000000000b2", fired_at, fired_at);
    t += softirq(0, 1.100100, false);
    return t;
}

} // namespace

TEST_CASE("6.9+: a pinned and a global timer due in the same jiffy fire LOCAL first") {
    // The pinned timer is armed first: in one base (6.1) the later-armed
    // global timer would fire first (each bucket runs from its head), in
    // 6.9's run_timer_softirq() the local base runs before the global one.
    const auto trace = [](bool six_nine) {
        return pinned_then_global(six_nine ? "# kernel: 6.12.118+deb13-cloud-amd64\n" : "", six_nine);
    };
    const ReplayResult r = replay_kernel_trace(trace(true), "bases");
    CHECK(r.kernel_6_9);
    CHECK(r.idx.agree == 2);
    CHECK(r.expiry.events == 2);
    CHECK(r.expiry.agree == 2);
    CHECK(r.expiry.disagree == 0);
    CHECK(r.notes_by_class.count("model fire not matched by the kernel") == 0);

    // The same order in one base of a 6.1 trace: the model fires the global
    // timer first.
    const ReplayResult one_base = replay_kernel_trace(trace(false), "one base");
    CHECK_FALSE(one_base.kernel_6_9);
    CHECK(one_base.expiry.disagree > 0);
}

TEST_CASE("6.9+: an expiry after tmigr_handle_remote_cpu is checked against the idle CPU's global base") {
    // CPU 1 arms a timer and goes idle; CPU 0, the migrator, expires CPU 1's
    // global base in its own softirq (timer_expire_remote()).
    const Jiffies expires = kJ + 5;
    const Jiffies fired_at = modern::calc_wheel_index(expires, kJ, modern::depth_for_hz(kHz)).bucket_expiry;
    const auto trace = [&](const char* flags, bool remote_line) {
        std::string t = "# kernel: 6.12.118+deb13-cloud-amd64\n# hz=250\n";
        t += start(1, 1.000000, "00000000000000c3", kJ, expires, flags);
        t += line(1, 1.000010, "tmigr_cpu_idle: cpu=1 parent=00000000b503d1a4 nextevt=9223372036854775807 "
                               "wakeup=9223372036854775807");
        t += softirq(0, 1.100000, true);
        if (remote_line)
            t += line(0, 1.100005, "tmigr_handle_remote_cpu: cpu=1 parent=00000000b503d1a4 wakeup=9223372036854775807");
        t += expire(0, 1.100010, "00000000000000c3", fired_at, fired_at);
        t += softirq(0, 1.100100, false);
        return t;
    };
    const ReplayResult r = replay_kernel_trace(trace("", true), "remote");
    CHECK(r.idx.agree == 1);
    CHECK(r.expiry.events == 1);
    CHECK(r.expiry.agree == 1);
    CHECK(r.expiry.disagree == 0);

    // Without the tmigr line, in a trace that has timer_migration events
    // (so nothing is inferred), CPU 0's own bases do not hold it.
    const ReplayResult own = replay_kernel_trace(trace("", false), "own bases");
    CHECK_FALSE(own.remote_inferred);
    CHECK(own.expiry.agree == 0);
    REQUIRE(own.disagreements.size() == 1);
    CHECK(own.disagreements[0].cause == ReplayCause::other_cpu);
    CHECK(own.disagreements[0].ours.find("CPU 1 global base") != std::string::npos);

    // A pinned timer of CPU 1 sits in its local base, which the remote
    // expiry does not run.
    const ReplayResult pinned = replay_kernel_trace(trace("P", true), "pinned");
    REQUIRE(pinned.disagreements.size() == 1);
    CHECK(pinned.disagreements[0].cause == ReplayCause::other_cpu);
    CHECK(pinned.disagreements[0].ours.find("CPU 1 local base") != std::string::npos);
}

TEST_CASE("6.9+ without timer_migration events: an expiry of another CPU's global timer is inferred remote") {
    // As LTTng records 6.9+ (no tmigr probe): CPU 1 expires CPU 0's global
    // timer, and only the timer_start's cpu= and flags show that this was
    // CPU 1's remote expiry of idle CPU 0 (timer_expire_remote()).
    const Jiffies expires = kJ + 5;
    const Jiffies fired_at = modern::calc_wheel_index(expires, kJ, modern::depth_for_hz(kHz)).bucket_expiry;
    const auto trace = [&](const char* flags) {
        std::string t = "# kernel: 6.12.118+deb13-cloud-amd64\n# hz=250\n";
        t += start(0, 1.000000, "00000000000000c3", kJ, expires, flags);
        t += softirq(1, 1.100000, true);
        t += expire(1, 1.100010, "00000000000000c3", fired_at, fired_at);
        t += softirq(1, 1.100100, false);
        return t;
    };
    const ReplayResult r = replay_kernel_trace(trace(""), "inferred");
    REQUIRE(r.remote_inferred);
    CHECK(r.remote_inferred->expiries == 1);
    CHECK(r.remote_inferred->runs == 1);
    CHECK(r.expiry.events == 1);
    CHECK(r.expiry.agree == 1);
    CHECK(r.expiry.disagree == 0);

    // A pinned timer of CPU 0 sits in its local base, which no remote
    // expiry runs: fired on CPU 1, it stays a disagreement.
    const ReplayResult pinned = replay_kernel_trace(trace("P"), "pinned");
    REQUIRE(pinned.remote_inferred);
    CHECK(pinned.remote_inferred->expiries == 0);
    CHECK(pinned.expiry.agree == 0);
    REQUIRE(pinned.disagreements.size() == 1);
    CHECK(pinned.disagreements[0].cause == ReplayCause::other_cpu);
    CHECK(pinned.disagreements[0].ours.find("CPU 0 local base") != std::string::npos);

    // So does a deferrable one (BASE_DEF).
    const ReplayResult deferrable = replay_kernel_trace(trace("D"), "deferrable");
    CHECK(deferrable.expiry.agree == 0);
    REQUIRE(deferrable.disagreements.size() == 1);
    CHECK(deferrable.disagreements[0].ours.find("CPU 0 deferrable base") != std::string::npos);

    // A 6.1 trace (one base per CPU, no remote expiry): nothing is inferred.
    std::string six_one = "# hz=250\n";
    six_one += start(0, 1.000000, "00000000000000c3", kJ, expires, "", false);
    six_one += softirq(1, 1.100000, true);
    six_one += expire(1, 1.100010, "00000000000000c3", fired_at, fired_at);
    six_one += softirq(1, 1.100100, false);
    const ReplayResult old = replay_kernel_trace(six_one, "6.1");
    CHECK_FALSE(old.kernel_6_9);
    CHECK_FALSE(old.remote_inferred);
    CHECK(old.expiry.agree == 0);
}

TEST_CASE("6.9+: the remote expiry ends with the migrator's softirq") {
    // After the remote softirq ends, CPU 0's next expiry is of its own bases.
    const Jiffies e1 = kJ + 5;
    const Jiffies f1 = modern::calc_wheel_index(e1, kJ, modern::depth_for_hz(kHz)).bucket_expiry;
    const Jiffies e2 = kJ + 9;
    const Jiffies f2 = modern::calc_wheel_index(e2, kJ, modern::depth_for_hz(kHz)).bucket_expiry;
    std::string t = "# hz=250\n";
    t += start(1, 1.000000, "00000000000000c3", kJ, e1, "");
    t += start(0, 1.000100, "00000000000000d4", kJ, e2, "");
    t += softirq(0, 1.100000, true);
    t += line(0, 1.100005, "tmigr_handle_remote_cpu: cpu=1 parent=00000000b503d1a4 wakeup=9223372036854775807");
    t += expire(0, 1.100010, "00000000000000c3", f1, f1);
    t += softirq(0, 1.100100, false);
    t += softirq(0, 1.200000, true);
    t += expire(0, 1.200010, "00000000000000d4", f2, f2);
    t += softirq(0, 1.200100, false);
    const ReplayResult r = replay_kernel_trace(t, "two softirqs");
    CHECK(r.expiry.events == 2);
    CHECK(r.expiry.agree == 2);
    CHECK(r.expiry.disagree == 0);
}

TEST_CASE("a trace that shows 6.8 or later but not which side of 6.9 is refused until the kernel is given") {
    // 6.8 prints bucket_expiry= and runs one base; 6.9 runs three. Nothing
    // else in this trace tells them apart.
    const std::string t = pinned_then_global("", true);
    try {
        replay_kernel_trace(t, "ambiguous");
        FAIL("no error");
    } catch (const TraceError& e) {
        CHECK(e.field() == "kernel");
        CHECK(e.line() == 2); // the first timer_start printing bucket_expiry=
        CHECK(std::string(e.what()).find("6.8 or later") != std::string::npos);
        CHECK(std::string(e.what()).find("--kernel") != std::string::npos);
    }
    // Said as 6.9: three bases, and the pinned timer fires first.
    const auto as = [&](KernelVersion v) {
        ReplayOptions o;
        o.kernel = KernelVersionResolution{KernelVersionRange{v, KernelVersion{v.major, v.minor + 1}}, "--kernel", 0};
        return replay_kernel_trace(t, "given", o);
    };
    const ReplayResult six_nine = as({6, 9});
    CHECK(six_nine.kernel_6_9);
    CHECK(six_nine.expiry.agree == 2);
    // Said as 6.8: one base, where the later-armed global timer would come
    // first: the order disagrees, which only the version explains.
    const ReplayResult six_eight = as({6, 8});
    CHECK_FALSE(six_eight.kernel_6_9);
    CHECK(six_eight.expiry.disagree > 0);
}
