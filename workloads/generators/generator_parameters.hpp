// The generators' parameters as data: each one's name (the option that sets
// it, without dashes), the generators it applies to, its help line, its
// bounds and where it lives in GeneratorParams. Front ends (the CLI's
// options, a sweep's cells) register and check parameters from this table,
// so none of them has to know the generators. Also what a checked
// --workload list looks like in reports: its description line and JSON.
#pragma once

#include "workloads/generators/generator_params.hpp"

#include <nlohmann/json.hpp>

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace timersim {

struct GeneratorParameter {
    const char* name;       // as the option spells it, without dashes
    const char* generators; // comma-separated, as in --workload (for the JSON report)
    const char* help;
    double min;
    double max;
    double (*get)(const GeneratorParams&);
    void (*set)(GeneratorParams&, double);
    bool integer = false; // a count: given and shown as an integer
};

struct GeneratorParameterGroup {
    const char* caption; // the help section
    std::vector<GeneratorParameter> parameters;
};

// Grouped by generator, in help order; the first group applies to all.
const std::vector<GeneratorParameterGroup>& generator_parameter_groups();

// Sets `p` in `params` after checking `value` against its bounds; throws
// std::invalid_argument("--NAME: must be MIN..MAX, got VALUE") otherwise.
// An integer parameter takes the value as given, so the message shows it
// unrounded.
void set_generator_parameter(GeneratorParams& params, const GeneratorParameter& p, double value);
void set_generator_parameter(GeneratorParams& params, const GeneratorParameter& p, std::uint64_t value);

// A --workload list with its parameters, checked as a whole.
struct GeneratorWorkload {
    std::vector<std::pair<std::string, std::uint32_t>> parts; // expand_workload_list()
    std::string description; // one line: a phrase per generator, then the seed
    nlohmann::ordered_json params; // for JSON reports: per generator, the parameters that apply to it
};

// Throws std::invalid_argument naming the option at fault: parameters that
// contradict each other (--rto-min-ms above --rto-max-ms, ...), a bad list
// (--workload: ...), or a list that needs more timers than a run may have
// (--connections: ...).
GeneratorWorkload generator_workload(std::string_view list, const GeneratorParams& params);

} // namespace timersim
