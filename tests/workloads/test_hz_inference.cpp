// HZ from a kernel trace's own jiffies (workloads/traces/kernel/hz_inference.hpp),
// on the committed real 6.1 HZ=250 capture and on copies of it rescaled in
// time to 100, 300 and 1000 jiffies a second.
#include "workloads/traces/input/kernel_text.hpp"
#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"

#include "test_data_dir.hpp"
#include "tests/xz_fixture.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <sstream>
#include <stdexcept>
#include <string>
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

namespace {

std::string capture_text() {
    return test::read_xz(std::filesystem::path(TEST_DATA_DIR) / "kernel" / "capture-6.1-hz250.trace.xz");
}

// The capture as /sys/kernel/tracing/trace prints it: no "# hz=" line.
std::string without_hz_line(std::string text) {
    const std::size_t at = text.find("# hz=");
    REQUIRE(at != std::string::npos);
    text.erase(at, text.find('\n', at) + 1 - at);
    return text;
}

std::string error_of(const std::string& text, const HzChoice& choice) {
    try {
        resolve_ftrace_hz(text, "t.trace", choice);
    } catch (const TraceError& e) {
        CHECK(e.field() == "hz");
        CHECK(std::string(e.what()).rfind("t.trace:", 0) == 0);
        return e.what();
    }
    return "";
}

} // namespace

TEST_CASE("resolve_ftrace_hz: HZ from the jiffies when nothing says it; a contradicting --hz or line is refused") {
    const std::string raw = without_hz_line(capture_text());
    const HzResolution found = resolve_ftrace_hz(raw, "t.trace", {});
    CHECK(found.hz == 250);
    CHECK(found.source == "the trace's jiffies");

    CHECK(resolve_ftrace_hz(raw, "t.trace", {.option = 250}).hz == 250);
    const std::string wrong = error_of(raw, {.option = 1000});
    CHECK(wrong.find("--hz says HZ=1000, but the trace's jiffies say HZ=250") != std::string::npos);
    CHECK(wrong.find("--force-hz") != std::string::npos);
    const HzResolution forced = resolve_ftrace_hz(raw, "t.trace", {.option = 1000, .force = true});
    CHECK(forced.hz == 1000);
    CHECK(forced.source == "--hz (forced)");

    // The committed capture's own "# hz=250" line, and a doctored one.
    CHECK(resolve_ftrace_hz(capture_text(), "t.trace", {}).source == "the trace's '# hz=' line");
    std::string lying = capture_text();
    lying.replace(lying.find("# hz=250"), 8, "# hz=300");
    CHECK(error_of(lying, {}).find("the trace's '# hz=' line says HZ=300, but the trace's jiffies say HZ=250") !=
          std::string::npos);
}

TEST_CASE("resolve_ftrace_hz: a trace too short to tell is refused with the candidates, never guessed") {
    // The events of 30 ms, from 10 s into the capture, without the hz line.
    const std::string raw = without_hz_line(capture_text());
    std::istringstream in(raw);
    std::string line, brief;
    while (std::getline(in, line)) {
        const auto colon = line.find(": timer_");
        if (line.starts_with("#") || colon == std::string::npos) {
            if (line.starts_with("#")) brief += line + "\n";
            continue;
        }
        const auto space = line.rfind(' ', colon);
        const double t = std::stod(line.substr(space + 1, colon - space - 1));
        if (t >= 10.0 && t < 10.03) brief += line + "\n";
    }
    const std::string e = error_of(brief, {});
    CHECK(e.find("HZ unknown") != std::string::npos);
    CHECK(e.find("ambiguous") != std::string::npos);
    CHECK(e.find("pass --hz") != std::string::npos);
    // --hz decides it (nothing contradicts it).
    CHECK(resolve_ftrace_hz(brief, "t.trace", {.option = 300}).hz == 300);
}

namespace {

// What a JiffiesSampler fed `samples` in this order says.
struct Sampled {
    HzInference inference;
    std::vector<bool> fits;
    std::vector<JiffiesSample> clock;
};
Sampled sample(const std::vector<JiffiesSample>& samples, unsigned also) {
    JiffiesSampler sampler;
    sampler.fit_also(also);
    for (const JiffiesSample& s : samples) sampler.add(s);
    sampler.finish();
    Sampled r{.inference = sampler.inference()};
    for (unsigned hz : {100u, 250u, 300u, 1000u, also}) r.fits.push_back(sampler.fits(hz));
    r.clock = sampler.take_clock_samples();
    return r;
}

void check_same_as_whole(const std::vector<JiffiesSample>& samples, unsigned also) {
    const Sampled s = sample(samples, also);
    const HzInference whole = infer_hz(samples);
    CHECK(s.inference.hz == whole.hz);
    CHECK(s.inference.samples == whole.samples);
    CHECK(s.inference.span_s == whole.span_s);
    CHECK(s.inference.explanation == whole.explanation);
    REQUIRE(s.inference.fits.size() == whole.fits.size());
    for (std::size_t i = 0; i < whole.fits.size(); ++i)
        CHECK(s.inference.fits[i].share_in_band == whole.fits[i].share_in_band);
    std::size_t i = 0;
    for (unsigned hz : {100u, 250u, 300u, 1000u, also}) CHECK(s.fits[i++] == hz_fits(samples, hz));
    const std::vector<JiffiesSample> clock = clock_samples(samples);
    REQUIRE(s.clock.size() == clock.size());
    for (std::size_t k = 0; k < clock.size(); ++k) {
        CHECK(s.clock[k].time_ns == clock[k].time_ns);
        CHECK(s.clock[k].jiffies == clock[k].jiffies);
    }
}

} // namespace

TEST_CASE("a sampler taking samples as a pass reads them says what all of them say") {
    const std::vector<JiffiesSample> capture = capture_samples();
    for (unsigned hz : {100u, 250u, 300u, 1000u}) {
        CAPTURE(hz);
        check_same_as_whole(rescaled(capture, hz), 1234);
    }
    check_same_as_whole({}, 250);
    check_same_as_whole({{5, 100}}, 250);
}

TEST_CASE("a sampler refuses a sample earlier than the one before") {
    JiffiesSampler sampler;
    sampler.add({100, 5});
    sampler.add({100, 6});
    CHECK_THROWS_AS(sampler.add({99, 6}), std::logic_error);
}

TEST_CASE("a sampler used out of its order is a logic error, never a wrong answer") {
    // HZ=250 for 2 s: a sample every tick.
    std::vector<JiffiesSample> line;
    for (std::uint64_t i = 0; i < 500; ++i) line.push_back({i * 4'000'000, 1000 + i});
    const auto fed = [&](JiffiesSampler& sampler) {
        for (const JiffiesSample& s : line) sampler.add(s);
    };
    {
        JiffiesSampler sampler;
        fed(sampler);
        // Before finish(): the last window is not counted yet.
        CHECK_THROWS_AS(sampler.fits(250), std::logic_error);
        CHECK_THROWS_AS(sampler.inference(), std::logic_error);
        CHECK_THROWS_AS(sampler.take_clock_samples(), std::logic_error);
        sampler.finish();
        CHECK(sampler.fits(250));
        CHECK_FALSE(sampler.fits(300));
        CHECK(sampler.inference().hz == 250u);
        // An HZ never fitted: nothing was counted for it.
        CHECK_THROWS_AS(sampler.fits(1234), std::logic_error);
        CHECK_THROWS_AS(sampler.add({line.back().time_ns + 4'000'000, 1500}), std::logic_error);
        CHECK_THROWS_AS(sampler.finish(), std::logic_error);
        CHECK(sampler.take_clock_samples().size() == line.size());
        CHECK_THROWS_AS(sampler.take_clock_samples(), std::logic_error);
    }
    {
        // Fitted after samples were taken: their windows would not count.
        JiffiesSampler sampler;
        sampler.add(line.front());
        CHECK_THROWS_AS(sampler.fit_also(1234), std::logic_error);
    }
    {
        JiffiesSampler sampler;
        sampler.fit_also(1234);
        fed(sampler);
        sampler.finish();
        CHECK_FALSE(sampler.fits(1234));
        CHECK(sampler.fits(1234) == hz_fits(line, 1234));
    }
}

TEST_CASE("resolve_ftrace_hz over a file, read in passes, says what it says over the text in memory") {
    const std::filesystem::path path = std::filesystem::path(TEST_DATA_DIR) / "kernel" / "capture-6.1-hz250.trace.xz";
    for (const HzChoice& choice : {HzChoice{}, HzChoice{.option = 250}, HzChoice{.option = 1000, .force = true}}) {
        InputFile in(path.string());
        KernelText text(in);
        const HzResolution passes = resolve_ftrace_hz([&]() -> InputFile& { return text.pass(); }, text.name(), choice);
        const HzResolution memory = resolve_ftrace_hz(capture_text(), path.string(), choice);
        CHECK(passes.hz == memory.hz);
        CHECK(passes.source == memory.source);
        CHECK(passes.inference.explanation == memory.inference.explanation);
        REQUIRE(passes.clock_samples.size() == memory.clock_samples.size());
        CHECK(passes.clock_samples.back().jiffies == memory.clock_samples.back().jiffies);
        // The text stays readable for the replay's pass.
        FtraceReader reader(text.pass(), passes.hz);
        if (passes.forced) reader.force_hz();
        FtraceEvent e;
        std::uint64_t events = 0;
        while (reader.next(e)) ++events;
        CHECK(events > 8000);
    }
}
