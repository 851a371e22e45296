// A progress bar on stderr for long runs: drawn only when stderr is a
// terminal, so logs and pipes stay clean and output stays deterministic.
// It shows the fraction done and the time left at the pace so far:
//
//   run [=========                     ]  31% 1m 04s, ETA 2m 21s
#pragma once

#include <chrono>
#include <cstdio>
#include <functional>
#include <string>
#include <string_view>

namespace timersim {

class ProgressBar {
public:
    using Clock = std::chrono::steady_clock;

    // Where and whether to draw, and the clock (the tests give their own).
    struct Sink {
        std::FILE* out = stderr;
        bool enabled = false;
        std::function<Clock::time_point()> now = [] { return Clock::now(); };
    };

    explicit ProgressBar(std::string label); // stderr, enabled when it is a terminal
    ProgressBar(std::string label, Sink sink);
    ~ProgressBar(); // clears the line if anything was drawn
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    // fraction in [0, 1]; redraws at most ~10 times a second, and only after
    // the run has lasted a second (short runs print nothing).
    void update(double fraction);

private:
    std::string label_;
    Sink sink_;
    bool drawn_ = false;
    Clock::time_point start_;
    Clock::time_point last_draw_;
};

// One drawing of the bar (without the leading carriage return): `fraction`
// done after `elapsed`; the ETA extrapolates the pace so far, and is "ETA ?"
// until some work is done.
std::string format_progress(std::string_view label, double fraction, std::chrono::nanoseconds elapsed);

// "7s", "2m 05s", "1h 02m", "3d 04h": a wall-clock span for people.
std::string format_eta(std::chrono::nanoseconds span);

} // namespace timersim
