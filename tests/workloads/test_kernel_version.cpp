// The recording kernel's version from a trace (workloads/traces/kernel/
// kernel_version.hpp): from the header of every committed capture, from
// their events with the header removed, and refused where they contradict.
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"

#include "test_data_dir.hpp"
#include "tests/xz_fixture.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

using namespace timersim;

namespace {

std::string capture(const char* name) {
    return test::read_xz(std::filesystem::path(TEST_DATA_DIR) / "kernel" / name);
}

// The text without its "# kernel:" line (as /sys/kernel/tracing/trace prints it).
std::string without_kernel_line(std::string text) {
    const auto at = text.find("# kernel:");
    REQUIRE(at != std::string::npos);
    text.erase(at, text.find('\n', at) + 1 - at);
    return text;
}

std::string replace_kernel_line(std::string text, const std::string& release) {
    const auto at = text.find("# kernel:");
    REQUIRE(at != std::string::npos);
    const auto end = text.find('\n', at);
    text.replace(at, end - at, "# kernel: " + release);
    return text;
}

KernelVersionResolution resolve(const std::string& text, std::optional<KernelVersion> option = {}) {
    const HzResolution hz = resolve_ftrace_hz(text, "t.trace", HzChoice{.option = 250});
    return resolve_kernel_version(hz.kernel_evidence, option, "t.trace");
}

constexpr KernelVersion v(unsigned major, unsigned minor) { return KernelVersion{major, minor}; }

} // namespace

TEST_CASE("a release names its major.minor; anything else is no release") {
    CHECK(parse_kernel_release("6.12.118+deb13-cloud-amd64") == v(6, 12));
    CHECK(parse_kernel_release("6.1.0-57-cloud-amd64") == v(6, 1));
    CHECK(parse_kernel_release("3.6.11-1-ARCH") == v(3, 6));
    CHECK(parse_kernel_release(" 6.12 ") == v(6, 12));
    CHECK(parse_kernel_release("7.3") == v(7, 3));
    for (const char* bad : {"", "6", "6.", "6.x", "x.1", "6.1rc1", "0.9", "banana"})
        CHECK_MESSAGE(!parse_kernel_release(bad), bad);
}

TEST_CASE("a range has an era only when every version in it runs the same timer design") {
    CHECK(KernelVersionRange{v(6, 12), v(6, 13)}.describe() == "6.12");
    CHECK(KernelVersionRange{v(6, 12), v(6, 13)}.era() == KernelTimerEra::pull_model);
    CHECK(KernelVersionRange{v(6, 9), std::nullopt}.era() == KernelTimerEra::pull_model);
    CHECK(KernelVersionRange{v(6, 8), std::nullopt}.describe() == "6.8 or later");
    CHECK_FALSE(KernelVersionRange{v(6, 8), std::nullopt}.era());
    CHECK(KernelVersionRange{v(6, 8), v(6, 9)}.era() == KernelTimerEra::in_place);
    CHECK(KernelVersionRange{v(5, 2), v(6, 8)}.describe() == "5.2 to 6.7");
    CHECK(KernelVersionRange{v(5, 2), v(6, 8)}.era() == KernelTimerEra::in_place);
    CHECK(KernelVersionRange{v(4, 8), v(4, 9)}.era() == KernelTimerEra::in_place);
    CHECK(KernelVersionRange{v(4, 7), v(4, 8)}.era() == KernelTimerEra::cascading);
    CHECK(KernelVersionRange{v(4, 2), v(4, 11)}.describe() == "4.2 to 4.10");
    CHECK_FALSE(KernelVersionRange{v(4, 2), v(4, 11)}.era());
    CHECK(KernelVersionRange{v(0, 0), v(4, 2)}.describe() == "before 4.2");
    CHECK(KernelVersionRange{v(0, 0), v(4, 2)}.era() == KernelTimerEra::cascading);
    CHECK(KernelVersionRange{}.describe() == "unknown");
    CHECK_FALSE(KernelVersionRange{}.era());
    CHECK(KernelVersionRange{v(7, 0), std::nullopt}.describe() == "7.0 or later");
    CHECK(KernelVersionRange{v(6, 0), v(7, 0)}.describe() == "6.0 to 6.x");
}

TEST_CASE("every committed capture names its kernel in its header, and its events agree") {
    const KernelVersionResolution six_one = resolve(capture("capture-6.1-hz250.trace.xz"));
    CHECK(six_one.range.describe() == "6.1");
    CHECK(six_one.source == "the trace's '# kernel:' line");
    CHECK(six_one.line == 2);
    CHECK(six_one.era() == KernelTimerEra::in_place);
    const KernelVersionResolution six_twelve = resolve(capture("capture-6.12-hz250.trace.xz"));
    CHECK(six_twelve.range.describe() == "6.12");
    CHECK(six_twelve.era() == KernelTimerEra::pull_model);
    CHECK(six_twelve.describe() == "kernel 6.12 from the trace's '# kernel:' line");
    for (const char* name : {"capture-6.1-hz250-1cpu.trace.xz", "capture-6.1-hz250-2cpu-nohz.trace.xz",
                             "capture-6.1-hz250-2cpu-nohz-off.trace.xz", "capture-6.1-hz250-hrtimer.trace.xz",
                             "capture-6.1-hz250-softirq.trace.xz"})
        CHECK_MESSAGE(resolve(capture(name)).range.describe() == "6.1", name);
    for (const char* name : {"capture-6.12-hz250-1cpu.trace.xz", "capture-6.12-hz250-16cpu.trace.xz"}) {
        CHECK_MESSAGE(resolve(capture(name)).range.describe() == "6.12", name);
        CHECK_MESSAGE(resolve(capture(name)).era() == KernelTimerEra::pull_model, name);
    }
    const KernelVersionResolution seven = resolve(capture("capture-7.3-hz250.trace.xz"));
    CHECK(seven.range.describe() == "7.3");
    CHECK(seven.era() == KernelTimerEra::pull_model);
}

TEST_CASE("without the header, the events bound the version, enough to tell the design") {
    // 6.1: timer_expire_entry prints baseclk= (5.2+), timer_start idx= and
    // no bucket_expiry= (before 6.8).
    const KernelVersionResolution six_one = resolve(without_kernel_line(capture("capture-6.1-hz250.trace.xz")));
    CHECK(six_one.range.describe() == "5.2 to 6.7");
    CHECK(six_one.era() == KernelTimerEra::in_place);
    CHECK(six_one.source.find("baseclk=") != std::string::npos);
    CHECK(six_one.line > 0);
    // trace-cmd report's rendering of the same has no header at all.
    const KernelVersionResolution rendered = resolve(capture("capture-6.1-hz250.trace-cmd.txt.xz"));
    CHECK(rendered.era() == KernelTimerEra::in_place);
    // 6.12: its tmigr_* events say 6.9 or later.
    const KernelVersionResolution six_twelve = resolve(without_kernel_line(capture("capture-6.12-hz250.trace.xz")));
    CHECK(six_twelve.range.describe() == "6.9 or later");
    CHECK(six_twelve.era() == KernelTimerEra::pull_model);
    CHECK(six_twelve.source.find("tmigr_") != std::string::npos);
    for (const char* name : {"capture-6.12-hz250-16cpu.trace.xz", "capture-7.3-hz250.trace.xz"}) {
        const KernelVersionResolution r = resolve(without_kernel_line(capture(name)));
        CHECK_MESSAGE(r.range.describe() == "6.9 or later", name);
        CHECK_MESSAGE(r.era() == KernelTimerEra::pull_model, name);
    }
    // On one CPU 6.9+ builds no migration hierarchy (6.9 tmigr_init()
    // returns early), so there is no tmigr_* event: bucket_expiry= says 6.8
    // or later, and that does not tell the design.
    const KernelVersionResolution one_cpu = resolve(without_kernel_line(capture("capture-6.12-hz250-1cpu.trace.xz")));
    CHECK(one_cpu.range.describe() == "6.8 or later");
    CHECK_FALSE(one_cpu.era());
}

TEST_CASE("a header the events contradict is refused at its line; --kernel overrides both") {
    const std::string text = replace_kernel_line(capture("capture-6.12-hz250.trace.xz"), "6.1.0-57-cloud-amd64");
    try {
        resolve(text);
        FAIL("no error");
    } catch (const TraceError& e) {
        CHECK(e.line() == 2);
        CHECK(e.field() == "kernel");
        CHECK(std::string(e.what()).find("tmigr_* events, so it is 6.9 or later") != std::string::npos);
        CHECK(std::string(e.what()).find("--kernel") != std::string::npos);
    }
    const KernelVersionResolution given = resolve(text, v(6, 12));
    CHECK(given.range.describe() == "6.12");
    CHECK(given.source == "--kernel");

    // 6.1's events bound it below 6.8: a header saying 7.3 is refused too.
    CHECK_THROWS_AS(resolve(replace_kernel_line(capture("capture-6.1-hz250.trace.xz"), "7.3.4")), TraceError);
    // So is a header that names no release.
    CHECK_THROWS_AS(resolve(replace_kernel_line(capture("capture-6.1-hz250.trace.xz"), "banana")), TraceError);
    // Found by fuzzing: a NUL in the release ended the message there; it is
    // shown escaped, the message one printable line to its "(kernel)".
    try {
        resolve(replace_kernel_line(capture("capture-6.1-hz250.trace.xz"), std::string("6.1\0-57", 7)));
        FAIL("no error");
    } catch (const TraceError& e) {
        const std::string what = e.what();
        CHECK(what.find("'6.1\\x00-57' is no kernel release") != std::string::npos);
        CHECK(what.ends_with("(kernel)"));
    }
}

TEST_CASE("4.2-4.10's timer_start format spans 4.8, so the design needs --kernel") {
    const std::string text =
        "# hz=250\n"
        "          <idle>-0       [000] d.s1.     1.000000: timer_start: timer=ffff8880aa function=f "
        "expires=4294900010 [timeout=10] flags=0x00000000\n";
    const KernelVersionResolution k = resolve(text);
    CHECK(k.range.describe() == "4.2 to 4.10");
    CHECK_FALSE(k.era());
    CHECK(k.line == 2);
    try {
        (void)k.era_for("validate", "t.trace");
        FAIL("no error");
    } catch (const TraceError& e) {
        CHECK(e.line() == 2);
        CHECK(std::string(e.what()).find("--kernel") != std::string::npos);
    }
    // A trace that shows nothing of its kernel: the range is unknown.
    const KernelVersionResolution none = resolve("# hz=250\n");
    CHECK(none.range.describe() == "unknown");
    CHECK(none.source.empty());
    CHECK(none.describe() == "kernel unknown");
}

TEST_CASE("events whose formats no one kernel prints together are refused at the later line") {
    // bucket_expiry= is 6.8+, flags=0x is 4.2-4.10: no version has both.
    const std::string text =
        "# hz=250\n"
        "          <idle>-0       [000] d.s1.     1.000000: timer_start: timer=ffff8880aa function=f "
        "expires=4294900010 [timeout=10] bucket_expiry=4294900010 cpu=0 idx=10 flags=\n"
        "          <idle>-0       [000] d.s1.     1.000100: timer_start: timer=ffff8880ab function=f "
        "expires=4294900010 [timeout=10] flags=0x00000000\n";
    try {
        resolve(text);
        FAIL("no error");
    } catch (const TraceError& e) {
        CHECK(e.field() == "kernel");
        CHECK(e.line() == 3);
        CHECK(std::string(e.what()).find("no kernel prints this") != std::string::npos);
        CHECK(std::string(e.what()).find("--kernel") != std::string::npos);
    }
    // --kernel settles it.
    CHECK(resolve(text, v(6, 12)).range.describe() == "6.12");
}
