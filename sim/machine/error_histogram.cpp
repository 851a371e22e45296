#include "sim/machine/error_histogram.hpp"

#include <cmath>

namespace timersim {

std::int64_t ErrorHistogram::percentile(double p) const {
    if (empty()) return 0;
    // Nearest rank: the smallest value with at least ceil(p/100 * n) samples at or below it.
    const double wanted = std::ceil(p / 100.0 * static_cast<double>(total_));
    const std::uint64_t rank = wanted < 1 ? 1 : static_cast<std::uint64_t>(wanted);
    std::uint64_t seen = 0;
    for (const auto& [value, count] : counts_) {
        seen += count;
        if (seen >= rank) return value;
    }
    return counts_.rbegin()->first;
}

double ErrorHistogram::mean() const {
    if (empty()) return 0;
    long double sum = 0;
    for (const auto& [value, count] : counts_) sum += static_cast<long double>(value) * count;
    return static_cast<double>(sum / total_);
}

std::uint64_t ErrorHistogram::count_below(std::int64_t value) const {
    std::uint64_t n = 0;
    for (auto it = counts_.begin(); it != counts_.end() && it->first < value; ++it) n += it->second;
    return n;
}

} // namespace timersim
