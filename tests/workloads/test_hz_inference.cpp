// HZ from a kernel trace's own jiffies (workloads/traces/hz_inference.hpp),
// on the committed real 6.1 HZ=250 capture and on copies of it rescaled in
// time to 100, 300 and 1000 jiffies a second.
#include "workloads/traces/ftrace_reader.hpp"
#include "workloads/traces/hz_inference.hpp"

#include "test_data_dir.hpp"
#include "tests/xz_fixture.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <vector>

using namespace timersim;

namespace {

// Every (timestamp, jiffies) the capture's timer_start and
// timer_expire_entry lines tell.
std::vector<JiffiesSample> capture_samples() {
    const std::string text =
        test::read_xz(std::filesystem::path(TEST_DATA_DIR) / "kernel" / "capture-6.1-hz250.trace.xz");
    std::istringstream in(text);
    FtraceReader reader(in, "capture", 250);
    std::vector<JiffiesSample> out;
    FtraceEvent e;
    while (reader.next(e))
        if (const auto j = e.jiffies()) out.push_back({e.timestamp_ns, *j});
    return out;
}

// The same jiffies at `hz` a second: time scaled by 250 / hz.
std::vector<JiffiesSample> rescaled(std::vector<JiffiesSample> s, unsigned hz) {
    const std::uint64_t t0 = s.front().time_ns;
    for (JiffiesSample& x : s) x.time_ns = t0 + (x.time_ns - t0) * 250 / hz;
    return s;
}

} // namespace

TEST_CASE("the real HZ=250 capture and its rescaled copies give back their HZ") {
    const std::vector<JiffiesSample> real = capture_samples();
    REQUIRE(real.size() > 1000);
    const HzInference r = infer_hz(real);
    CHECK(r.hz == 250u);
    CHECK(r.samples == real.size());
    CHECK(r.span_s > 1.0);
    for (unsigned hz : {100u, 300u, 1000u}) {
        CAPTURE(hz);
        const HzInference x = infer_hz(rescaled(real, hz));
        REQUIRE(x.hz.has_value());
        CHECK(*x.hz == hz);
        for (const HzFit& f : x.fits) CHECK(f.fits == (f.hz == hz));
    }
}

TEST_CASE("a --hz or a '# hz=' line is checked against what the trace shows") {
    const std::vector<JiffiesSample> real = capture_samples();
    CHECK(hz_fits(real, 250));
    CHECK_FALSE(hz_fits(real, 300));
    CHECK_FALSE(hz_fits(real, 1000));
    CHECK_FALSE(hz_fits(real, 100));
    CHECK(hz_fits({}, 300)); // no samples: nothing contradicts
}

TEST_CASE("too short a trace is ambiguous and names the candidates; nonsense fits nothing") {
    const std::vector<JiffiesSample> real = capture_samples();
    // 30 ms of trace from 10 s on: a handful of jiffies, which several HZ explain.
    std::vector<JiffiesSample> brief;
    for (const JiffiesSample& s : real)
        if (s.time_ns >= 10'000'000'000 && s.time_ns < 10'030'000'000) brief.push_back(s);
    REQUIRE(brief.size() >= 3);
    const HzInference a = infer_hz(brief);
    CHECK_FALSE(a.hz.has_value());
    CHECK(a.explanation.find("ambiguous") != std::string::npos);

    // Jiffies that run at no kernel's rate (500 a second).
    const HzInference n = infer_hz(rescaled(real, 500));
    CHECK_FALSE(n.hz.has_value());
    CHECK(n.explanation.find("no kernel HZ fits") != std::string::npos);

    const HzInference one = infer_hz(std::vector<JiffiesSample>{real.front()});
    CHECK_FALSE(one.hz.has_value());
    CHECK(one.explanation.find("too few") != std::string::npos);
}

TEST_CASE("two hours with the trace clock 100 ppm off the tick still read as their HZ") {
    // sched_clock and the tick drift apart on real machines: 0.72 s, 180
    // jiffies at HZ=250 over two hours, far more than a band of two ticks.
    for (unsigned hz : kKernelHz) {
        CAPTURE(hz);
        std::vector<JiffiesSample> s;
        for (std::uint64_t t = 0; t < 7200'000'000'000ull; t += 37'000'000) {
            const double ticks = static_cast<double>(t) * 1e-9 * hz * (1 + 1e-4);
            s.push_back({t, 4294892296ull + static_cast<Jiffies>(ticks)});
        }
        const HzInference r = infer_hz(s);
        CHECK(r.hz == hz);
    }
}
