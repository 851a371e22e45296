// ErrorHistogram: an exact histogram of integer errors (fired jiffy minus
// requested expiry), with nearest-rank percentiles. Errors cluster on a few
// values (0, 1, level granularities), so a sorted map stays small even for
// hundreds of millions of samples.
#pragma once

#include <cstdint>
#include <map>

namespace timersim {

class ErrorHistogram {
public:
    void add(std::int64_t value, std::uint64_t count = 1) {
        if (count == 0) return;
        counts_[value] += count;
        total_ += count;
    }
    // Adds every sample of `other` (histograms of several CPUs together).
    void merge(const ErrorHistogram& other) {
        for (const auto& [value, count] : other.counts_) counts_[value] += count;
        total_ += other.total_;
    }
    std::uint64_t total() const noexcept { return total_; }
    bool empty() const noexcept { return total_ == 0; }
    const std::map<std::int64_t, std::uint64_t>& counts() const noexcept { return counts_; }

    // Nearest-rank percentile, p in [0, 100]; 0 for an empty histogram.
    std::int64_t percentile(double p) const;
    std::int64_t min() const { return empty() ? 0 : counts_.begin()->first; }
    std::int64_t max() const { return empty() ? 0 : counts_.rbegin()->first; }
    double mean() const;
    std::uint64_t count_below(std::int64_t value) const; // samples < value

private:
    std::map<std::int64_t, std::uint64_t> counts_;
    std::uint64_t total_ = 0;
};

} // namespace timersim
