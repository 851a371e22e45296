// The hyperfine-style summary of a comparison: the design with the least
// softirq time is the reference, and every other design is stated
// relative to it ("modern: 1.31x the heap's softirq time, p99 error 1 j
// (4 ms) later"), as hyperfine's "Summary: A ran 1.3 times faster than B".
// Computed once, so the text and the JSON say the same.
#pragma once

#include "sim/machine/comparison.hpp"
#include "sim/report/json.hpp"

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace timersim {

struct RelativeRow {
    Design design = Design::modern;
    std::string name; // design_name(): a wheel's spec, else the design's name
    // softirq_work_ns over the reference's; none when the reference's is 0.
    std::optional<double> softirq_ratio;
    // p99 error minus the reference's, in jiffies; none when either fired nothing.
    std::optional<std::int64_t> p99_diff_jiffies;
};

struct RelativeSummary {
    Design reference = Design::modern; // the least softirq time (the first of equals)
    std::string reference_name;
    std::uint64_t reference_softirq_ns = 0;
    std::vector<RelativeRow> others;   // every other design, in the comparison's order
};

// Empty for fewer than two designs.
std::optional<RelativeSummary> relative_summary(const Comparison& comparison);
// "Summary (...)\n  modern: ...\n", or "" for fewer than two designs.
std::string relative_summary_text(const Comparison& comparison);
// {"reference": ..., "reference_softirq_ns": ..., "designs": [...]}, or null.
ordered_json relative_summary_json(const Comparison& comparison);

} // namespace timersim
