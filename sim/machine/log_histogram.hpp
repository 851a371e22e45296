// Log2Histogram: a histogram of signed 64-bit values (nanoseconds) in
// logarithmic buckets, each power of two split into 8 linear sub-buckets
// (values below 16 exact), with exact count, min, max and mean. Nanosecond
// values are almost all distinct, so an exact histogram (ErrorHistogram)
// would grow with the number of samples; this one is fixed-size and
// allocation-free, which lets the engine add a sample per fired timer, and
// its percentiles are within 1/8 (12.5 %) of the true value.
#pragma once

#include <array>
#include <cstdint>
#include <limits>

namespace timersim {

class Log2Histogram {
public:
    static constexpr unsigned kSubBits = 3; // 8 sub-buckets per power of two
    static constexpr unsigned kBuckets = (64 - kSubBits) * (1u << kSubBits) + (1u << kSubBits);

    // Bucket of a magnitude, and the smallest and largest magnitude it holds.
    static unsigned bucket_of(std::uint64_t magnitude) noexcept;
    static std::uint64_t bucket_low(unsigned bucket) noexcept;
    static std::uint64_t bucket_high(unsigned bucket) noexcept;

    void add(std::int64_t value) noexcept;
    // Adds every sample of `other`: bucket counts and counts add, min and
    // max are the extremes of both, the mean is over all samples.
    void merge(const Log2Histogram& other) noexcept;

    std::uint64_t count() const noexcept { return count_; }
    bool empty() const noexcept { return count_ == 0; }
    std::int64_t min() const noexcept { return count_ ? min_ : 0; }
    std::int64_t max() const noexcept { return count_ ? max_ : 0; }
    double mean() const noexcept { return count_ ? sum_ / static_cast<double>(count_) : 0.0; }
    std::uint64_t negative() const noexcept; // samples < 0

    // Nearest-rank percentile, p in [0, 100]: the upper bound of the bucket
    // holding that rank, clamped to [min, max]. 0 for an empty histogram.
    std::int64_t percentile(double p) const noexcept;

    // Counts by bucket of the magnitude, for values >= 0 and for values < 0.
    const std::array<std::uint64_t, kBuckets>& positive_buckets() const noexcept { return positive_; }
    const std::array<std::uint64_t, kBuckets>& negative_buckets() const noexcept { return negative_; }

    friend bool operator==(const Log2Histogram&, const Log2Histogram&) = default;

private:
    std::array<std::uint64_t, kBuckets> positive_{};
    std::array<std::uint64_t, kBuckets> negative_{};
    std::uint64_t count_ = 0;
    std::int64_t min_ = std::numeric_limits<std::int64_t>::max();
    std::int64_t max_ = std::numeric_limits<std::int64_t>::min();
    double sum_ = 0;
};

} // namespace timersim
