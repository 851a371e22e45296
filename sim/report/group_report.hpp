// Tables of timers by group (`--by function|cpu|level|base`, the top groups in
// the default reports): armed, fired, the share of arms cancelled, the
// precision error's p50/p99/max and the softirq time the group's expiries
// took, in the perf-report way (one row per group, the largest first).
//
//     out += group_table_text(run.groups, run.config.hz, 10); // the top 10
//     out += group_table_text(run.groups, run.config.hz, 0);  // --by: all
//
// Rows are ordered by fired, then armed, then name; a group with nothing
// fired has n/a error columns (null in JSON, empty in CSV).
#pragma once

#include "sim/machine/group_metrics.hpp"
#include "sim/report/json.hpp"

#include <cstddef>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

inline constexpr std::size_t kDefaultTopGroups = 10;

// Group indices of `t` in report order.
std::vector<std::size_t> group_order(const GroupTable& t);

// The table with a heading line ("Timers by function ..."); `limit` rows at
// most (0: all), the rest summed in one line. `title_suffix` follows the
// heading's "by function" (e.g. ", classic").
std::string group_table_text(const GroupTable& t, std::size_t limit, std::string_view title_suffix = {});
// One JSON object: {"by": ..., "no_levels": ..., "unattributed_softirq_ns": ..., "groups": [...]}.
ordered_json group_table_json(const GroupTable& t);
// CSV: one header line, then one row per group of each design.
std::string group_csv_header();
std::string group_csv_rows(std::string_view design, const GroupTable& t);

} // namespace timersim
