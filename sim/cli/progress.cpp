#include "sim/cli/progress.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cstdio>
#include <unistd.h>

namespace timersim {

ProgressBar::ProgressBar(std::string label)
    : label_(std::move(label)), enabled_(::isatty(STDERR_FILENO) == 1),
      start_(std::chrono::steady_clock::now()), last_draw_(start_) {}

ProgressBar::~ProgressBar() {
    if (drawn_) fmt::print(stderr, "\r\033[K");
}

void ProgressBar::update(double fraction) {
    if (!enabled_) return;
    const auto now = std::chrono::steady_clock::now();
    using namespace std::chrono_literals;
    if (now - start_ < 1s || now - last_draw_ < 100ms) return;
    last_draw_ = now;
    drawn_ = true;
    fraction = std::clamp(fraction, 0.0, 1.0);
    constexpr int width = 30;
    const int filled = static_cast<int>(fraction * width);
    fmt::print(stderr, "\r{} [{:=<{}}{: <{}}] {:3.0f}%", label_, "", filled, "", width - filled,
               fraction * 100);
    std::fflush(stderr);
}

} // namespace timersim
