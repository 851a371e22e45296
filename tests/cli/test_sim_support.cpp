// The small pieces of sim/: timeout parsing, duration formatting, the error
// histogram and atomic output files.
#include "sim/report/atomic_file.hpp"
#include "sim/machine/error_histogram.hpp"
#include "sim/report/format_time.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/timeout_arg.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <stdexcept>

using namespace timersim;

TEST_CASE("timeouts parse as jiffies or as time rounded up like msecs_to_jiffies") {
    CHECK(parse_timeout_jiffies("36", 1000) == 36);
    CHECK(parse_timeout_jiffies("144ms", 1000) == 144);
    CHECK(parse_timeout_jiffies("1ms", 1000) == 1);
    CHECK(parse_timeout_jiffies("1ms", 250) == 1);     // 0.25 jiffy rounds up
    CHECK(parse_timeout_jiffies("5ms", 250) == 2);     // 1.25 -> 2
    CHECK(parse_timeout_jiffies("2h", 250) == 1800000);
    CHECK(parse_timeout_jiffies("1.5s", 300) == 450);
    CHECK(parse_timeout_jiffies("10ms", 300) == 3);    // exactly 3 jiffies: no spurious round-up
    CHECK(parse_timeout_jiffies("60s", 1000) == 60000);
    CHECK(parse_timeout_jiffies("1us", 1000) == 1);
    CHECK_THROWS_AS(parse_timeout_jiffies("", 250), std::invalid_argument);
    CHECK_THROWS_AS(parse_timeout_jiffies("ms", 250), std::invalid_argument);
    CHECK_THROWS_AS(parse_timeout_jiffies("12parsecs", 250), std::invalid_argument);
    CHECK_THROWS_AS(parse_timeout_jiffies("1.2.3s", 250), std::invalid_argument);
    CHECK_THROWS_AS(parse_timeout_jiffies("1.5", 250), std::invalid_argument);
    CHECK_THROWS_AS(parse_timeout_jiffies("99999999999999999999", 250), std::invalid_argument);
    CHECK_THROWS_AS(parse_timeout_jiffies("1e30d", 250), std::invalid_argument);
}

TEST_CASE("durations are shown with a readable unit") {
    CHECK(format_jiffies_as_time(62, 1000) == "62 ms");
    CHECK(format_jiffies_as_time(258047, 1000) == "4.3 m");
    CHECK(format_jiffies_as_time(1056964608, 1000) == "12.2 d");
    CHECK(format_jiffies_as_time(0, 250) == "0");
    CHECK(format_jiffies_as_time(1, 250) == "4 ms");
    CHECK(jiffies_word(1) == "1 jiffy");
    CHECK(jiffies_word(8) == "8 jiffies");
}

TEST_CASE("error histogram percentiles use the nearest rank") {
    ErrorHistogram h;
    CHECK(h.percentile(50) == 0);
    for (int v = 1; v <= 100; ++v) h.add(v);
    CHECK(h.total() == 100);
    CHECK(h.percentile(50) == 50);
    CHECK(h.percentile(99) == 99);
    CHECK(h.percentile(99.9) == 100);
    CHECK(h.percentile(100) == 100);
    CHECK(h.min() == 1);
    CHECK(h.mean() == doctest::Approx(50.5));
    h.add(-3, 2);
    CHECK(h.count_below(0) == 2);
    CHECK(h.min() == -3);
    CHECK(h.percentile(1) == -3);
}

TEST_CASE("atomic writes leave either the whole file or the old one") {
    const auto dir = std::filesystem::temp_directory_path() / "timersim-test-atomic";
    std::filesystem::create_directories(dir);
    const auto path = (dir / "out.txt").string();
    write_file_atomically(path, "first\n");
    write_file_atomically(path, "second\n");
    std::ifstream in(path);
    std::stringstream s;
    s << in.rdbuf();
    CHECK(s.str() == "second\n");
    // No temporary files are left behind.
    CHECK(std::distance(std::filesystem::directory_iterator(dir), std::filesystem::directory_iterator{}) == 1);
    // An unwritable target names the file and leaves nothing.
    CHECK_THROWS_WITH_AS(write_file_atomically((dir / "missing-dir" / "x").string(), "data"),
                         doctest::Contains("missing-dir"), std::runtime_error);
    std::filesystem::remove_all(dir);
}

TEST_CASE("the progress bar shows the time left at the pace so far") {
    using namespace std::chrono_literals;
    CHECK(format_eta(0s) == "0s");
    CHECK(format_eta(59s) == "59s");
    CHECK(format_eta(125s) == "2m 05s");
    CHECK(format_eta(3h + 2min + 5s) == "3h 02m");
    CHECK(format_eta(50h) == "2d 02h");

    // A quarter done in 20 s: 60 s to go.
    CHECK(format_progress("run", 0.25, 20s) == "run [=======                       ]  25% 20s, ETA 1m 00s");
    CHECK(format_progress("run", 0.0, 5s) == "run [                              ]   0% 5s, ETA ?");
    CHECK(format_progress("run", 1.0, 90s) == "run [==============================] 100% 1m 30s, ETA 0s");

    // A long run (--duration 4000000: 1e9 ticks) draws the bar with its ETA
    // once it has lasted a second, at most ten times a second.
    std::FILE* out = std::tmpfile();
    REQUIRE(out != nullptr);
    auto now = ProgressBar::Clock::time_point{};
    {
        ProgressBar bar("compare", {.out = out, .enabled = true, .now = [&] { return now; }});
        bar.update(0.001);  // at 0 s: nothing yet
        now += 2s;
        bar.update(0.01);   // 1 % in 2 s: 198 s left
        now += 50ms;
        bar.update(0.02);   // too soon to redraw
    }
    std::rewind(out);
    char buffer[512] = {};
    const std::size_t n = std::fread(buffer, 1, sizeof buffer - 1, out);
    std::fclose(out);
    CHECK(std::string(buffer, n) == "\rcompare [                              ]   1% 2s, ETA 3m 18s\033[K\r\033[K");
}
