#include "sim/cli/progress.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <cmath>
#include <unistd.h>

namespace timersim {

ProgressBar::ProgressBar(std::string label)
    : ProgressBar(std::move(label), Sink{.out = stderr, .enabled = ::isatty(STDERR_FILENO) == 1}) {}

ProgressBar::ProgressBar(std::string label, Sink sink)
    : label_(std::move(label)), sink_(std::move(sink)), start_(sink_.now()), last_draw_(start_) {}

ProgressBar::~ProgressBar() {
    if (drawn_) {
        std::fputs("\r\033[K", sink_.out);
        std::fflush(sink_.out);
    }
}

void ProgressBar::update(double fraction) {
    if (!sink_.enabled) return;
    const auto now = sink_.now();
    using namespace std::chrono_literals;
    if (now - start_ < 1s || now - last_draw_ < 100ms) return;
    last_draw_ = now;
    drawn_ = true;
    const std::string text = format_progress(label_, fraction, now - start_);
    std::fprintf(sink_.out, "\r%s\033[K", text.c_str());
    std::fflush(sink_.out);
}

std::string format_eta(std::chrono::nanoseconds span) {
    const double seconds = std::max(0.0, std::chrono::duration<double>(span).count());
    const auto s = static_cast<std::uint64_t>(std::llround(std::min(seconds, 1e12)));
    if (s < 60) return fmt::format("{}s", s);
    if (s < 3600) return fmt::format("{}m {:02}s", s / 60, s % 60);
    if (s < 86400) return fmt::format("{}h {:02}m", s / 3600, s % 3600 / 60);
    return fmt::format("{}d {:02}h", s / 86400, s % 86400 / 3600);
}

std::string format_progress(std::string_view label, double fraction, std::chrono::nanoseconds elapsed) {
    if (!(fraction >= 0)) fraction = 0; // also NaN
    fraction = std::min(fraction, 1.0);
    constexpr int width = 30;
    const int filled = static_cast<int>(fraction * width);
    std::string eta = "ETA ?";
    if (fraction > 0) {
        const double left = static_cast<double>(elapsed.count()) * (1 - fraction) / fraction;
        eta = "ETA " + format_eta(std::chrono::nanoseconds(static_cast<std::int64_t>(std::min(left, 8.64e18))));
    }
    return fmt::format("{} [{:=<{}}{: <{}}] {:3.0f}% {}, {}", label, "", filled, "", width - filled, fraction * 100,
                       format_eta(elapsed), eta);
}

} // namespace timersim
