// Options several commands share (--hz, --slack, --base-small, choice
// lists), declared and validated in one place so every command spells,
// documents and checks them the same way.
#pragma once

#include "sim/machine/design.hpp"
#include "wheel/kernel/classic_levels.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/kernel/kernel_version.hpp"

#include <boost/program_options.hpp>

#include <cstdint>
#include <initializer_list>
#include <optional>
#include <string>
#include <string_view>

namespace timersim::cli {

void add_hz_option(boost::program_options::options_description& options);
void add_classic_options(boost::program_options::options_description& options); // --slack, --base-small
// --hz and --force-hz of a command that reads a kernel trace (import,
// validate): HZ from --hz, the trace's '# hz=' line or its jiffies.
void add_kernel_hz_options(boost::program_options::options_description& options);

// A double option whose help shows its default as written: (=0.05), not
// the (=0.050000000000000003) of boost's 17 digits.
boost::program_options::typed_value<double>* double_value(double default_value);

// Throw UsageError naming the option on a bad value.
unsigned hz_option(const boost::program_options::variables_map& vm);
HzChoice kernel_hz_choice(const boost::program_options::variables_map& vm);

// --kernel VERSION: the recording kernel's version over what a kernel trace
// shows (workloads/traces/kernel/kernel_version.hpp).
extern const char* const kKernelOptionHelp;
void add_kernel_version_option(boost::program_options::options_description& options);
std::optional<KernelVersion> kernel_version_option(const boost::program_options::variables_map& vm);
std::optional<std::int64_t> slack_option(const boost::program_options::variables_map& vm);
classic::Geometry geometry_option(const boost::program_options::variables_map& vm);
std::string choice_option(const boost::program_options::variables_map& vm, std::string_view name,
                          std::initializer_list<std::string_view> choices);
// --design (or `name`): any design of the registry, by name or alias.
Design design_option(const boost::program_options::variables_map& vm, std::string_view name = "design");
// One design name or alias, for an option's value or a list item.
Design parse_design(std::string_view value, std::string_view option = "design");

} // namespace timersim::cli
