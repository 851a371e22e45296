// QueueLayout: what `timersim step` draws for the seeds' queues (schemes
// 1-6, netty, cog) and the configurable wheel (wheel:SPEC): their rings and
// levels as rows of bucket counts with the cursor, their lists as a count. Plain numbers, like wheel_snapshot.hpp for the
// kernel wheels, so tests can check them against placement().
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace timersim {

struct LayoutRow {
    std::string name;                   // "slot", "ring0", "list", "overflow", ...
    std::vector<std::uint32_t> counts;  // timers per bucket; empty: a list, drawn as its `total`
    std::uint64_t total = 0;            // entries in the row (all buckets, or the list)
    unsigned pointer = 0;               // the bucket the cursor points at (rings only)
    unsigned first_slot = 0;            // Placement::slot of bucket 0 (a flat bucket array's offset)
};

struct QueueLayout {
    std::string summary;          // one line: cursor, pending, what is special
    std::vector<LayoutRow> rows;  // row r is Placement::level first_level + r
    unsigned first_level = 0;     // 1 for levels numbered from 1 (the cascading wheels' tv1..)
    // The row of a Placement::deferrable_base timer's level first_level:
    // 0 when the layout draws no deferrable base.
    unsigned deferrable_row = 0;
};

} // namespace timersim
