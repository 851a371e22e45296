// The generators by name, and `--workload a,b,...` as one workload: each
// listed generator (mixed expanded into its parts) as a part of a composite
// workload, or the generator itself when there is only one.
#pragma once

#include "workloads/workload.hpp"
#include "workloads/generators/generator_params.hpp"

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

// Every name --workload accepts, in help order.
std::span<const std::string_view> generator_names();

// One generator with `connections` connections (its timers for burst: the
// burst size applies instead). `hz` and `after_tick_ns` are for
// connection-churn, which lays messages on the tick grid.
WorkloadFactory generator_factory(std::string_view name, const GeneratorParams& params, std::uint32_t connections,
                                  std::uint64_t ticks, unsigned hz, std::uint64_t after_tick_ns = 0);

// The names of a --workload list split at commas with mixed expanded, each
// with its connection count. Throws std::invalid_argument (the message
// names the culprit) for an empty or unknown name or a generator listed
// twice (also through mixed).
std::vector<std::pair<std::string, std::uint32_t>> expand_workload_list(std::string_view list,
                                                                        std::uint32_t connections);

// The whole list as one workload.
WorkloadFactory workload_list_factory(std::string_view list, const GeneratorParams& params, std::uint64_t ticks,
                                      unsigned hz, std::uint64_t after_tick_ns = 0);

} // namespace timersim
