// A progress bar on stderr for long runs: drawn only when stderr is a
// terminal, so logs and pipes stay clean and output stays deterministic.
#pragma once

#include <chrono>
#include <string>

namespace timersim {

class ProgressBar {
public:
    explicit ProgressBar(std::string label);
    ~ProgressBar(); // clears the line if anything was drawn
    ProgressBar(const ProgressBar&) = delete;
    ProgressBar& operator=(const ProgressBar&) = delete;

    // fraction in [0, 1]; redraws at most ~10 times a second, and only after
    // the run has lasted a second (short runs print nothing).
    void update(double fraction);

private:
    std::string label_;
    bool enabled_;
    bool drawn_ = false;
    std::chrono::steady_clock::time_point start_;
    std::chrono::steady_clock::time_point last_draw_;
};

} // namespace timersim
