#include "sim/machine/log_histogram.hpp"

#include <algorithm>
#include <bit>
#include <cmath>

namespace timersim {

namespace {

constexpr std::uint64_t kSub = std::uint64_t{1} << Log2Histogram::kSubBits;

std::uint64_t magnitude(std::int64_t v) noexcept {
    // -INT64_MIN overflows as a signed value; as unsigned it is exact.
    return v < 0 ? ~static_cast<std::uint64_t>(v) + 1 : static_cast<std::uint64_t>(v);
}

std::int64_t to_signed(std::uint64_t magnitude, bool negative) noexcept {
    if (!negative) return magnitude > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MAX : static_cast<std::int64_t>(magnitude);
    return magnitude > static_cast<std::uint64_t>(INT64_MAX) ? INT64_MIN : -static_cast<std::int64_t>(magnitude);
}

} // namespace

// Magnitudes below 2 * kSub are their own bucket; above, a power of two
// 2^w (w >= kSubBits + 1) is split into kSub buckets by the kSubBits bits
// after the leading one.
unsigned Log2Histogram::bucket_of(std::uint64_t m) noexcept {
    if (m < 2 * kSub) return static_cast<unsigned>(m);
    const unsigned shift = static_cast<unsigned>(std::bit_width(m)) - kSubBits - 1;
    return static_cast<unsigned>(shift * kSub + (m >> shift));
}

std::uint64_t Log2Histogram::bucket_low(unsigned b) noexcept {
    if (b < 2 * kSub) return b;
    const unsigned shift = b / kSub - 1;
    return (b % kSub + kSub) << shift;
}

std::uint64_t Log2Histogram::bucket_high(unsigned b) noexcept {
    if (b < 2 * kSub) return b;
    const unsigned shift = b / kSub - 1;
    return bucket_low(b) + ((std::uint64_t{1} << shift) - 1);
}

void Log2Histogram::add(std::int64_t value) noexcept {
    const unsigned b = bucket_of(magnitude(value));
    if (value < 0)
        ++negative_[b];
    else
        ++positive_[b];
    ++count_;
    min_ = std::min(min_, value);
    max_ = std::max(max_, value);
    sum_ += static_cast<double>(value);
}

void Log2Histogram::merge(const Log2Histogram& other) noexcept {
    if (other.count_ == 0) return;
    for (unsigned b = 0; b < kBuckets; ++b) {
        positive_[b] += other.positive_[b];
        negative_[b] += other.negative_[b];
    }
    count_ += other.count_;
    min_ = std::min(min_, other.min_);
    max_ = std::max(max_, other.max_);
    sum_ += other.sum_;
}

std::uint64_t Log2Histogram::negative() const noexcept {
    std::uint64_t n = 0;
    for (std::uint64_t c : negative_) n += c;
    return n;
}

std::int64_t Log2Histogram::percentile(double p) const noexcept {
    if (count_ == 0) return 0;
    const double clamped = std::clamp(p, 0.0, 100.0);
    const auto rank = std::max<std::uint64_t>(
        1, static_cast<std::uint64_t>(std::ceil(clamped / 100.0 * static_cast<double>(count_))));
    std::uint64_t seen = 0;
    // Most negative first.
    for (unsigned b = kBuckets; b-- > 0;) {
        seen += negative_[b];
        if (seen >= rank) return std::clamp(to_signed(bucket_low(b), true), min_, max_);
    }
    for (unsigned b = 0; b < kBuckets; ++b) {
        seen += positive_[b];
        if (seen >= rank) return std::clamp(to_signed(bucket_high(b), false), min_, max_);
    }
    return max_;
}

} // namespace timersim
