#include "sim/cli/common_options.hpp"

#include "sim/cli/cli.hpp"
#include "wheel/core/clock.hpp"

#include <fmt/format.h>

#include <charconv>

namespace timersim::cli {

namespace po = boost::program_options;

void add_hz_option(po::options_description& options) {
    options.add_options()("hz", po::value<unsigned>()->default_value(250),
                          fmt::format("timer frequency CONFIG_HZ (1..{}; the kernel offers 100, 250, 300, 1000)", kMaxHz).c_str());
}

void add_classic_options(po::options_description& options) {
    options.add_options()
        ("slack", po::value<std::string>()->default_value("default"),
         "classic wheel timer slack in mod_timer(): default (delay/256, as 4.x; off for a kernel trace of a "
         "kernel up to 4.7, whose expires has it already), off, or N jiffies")
        ("base-small", po::bool_switch(), "classic wheel with CONFIG_BASE_SMALL (64-slot tv1, 16-slot tv2..tv5)");
}

po::typed_value<double>* double_value(double default_value) {
    // {} is the shortest text that reads back as the same double.
    return po::value<double>()->default_value(default_value, fmt::format("{}", default_value));
}

unsigned hz_option(const po::variables_map& vm) {
    const unsigned hz = vm["hz"].as<unsigned>();
    if (!valid_hz(hz)) throw UsageError(fmt::format("--hz: must be 1..{}, got {}", kMaxHz, hz));
    return hz;
}

void add_kernel_hz_options(po::options_description& options) {
    options.add_options()
        ("hz", po::value<unsigned>(), fmt::format("the traced kernel's CONFIG_HZ (1..{}); without it, the trace's '# hz=N' line, "
                                                  "else the HZ its jiffies show (refused when they show none or several)", kMaxHz).c_str())
        ("force-hz", po::bool_switch(), "use --hz even where the trace's jiffies or its '# hz=' line show another HZ");
}

const char* const kKernelOptionHelp =
    "the recording kernel's version, MAJOR.MINOR (or a release, 6.12.118+deb13-cloud-amd64); without it, "
    "the trace's '# kernel:' line, else the range its events' formats show (refused where that range "
    "spans two timer designs and the design matters)";

void add_kernel_version_option(po::options_description& options) {
    options.add_options()("kernel", po::value<std::string>(), kKernelOptionHelp);
}

std::optional<KernelVersion> kernel_version_option(const po::variables_map& vm) {
    if (!vm.count("kernel")) return std::nullopt;
    const std::string value = vm["kernel"].as<std::string>();
    const auto v = parse_kernel_release(value);
    if (!v) throw UsageError(fmt::format("--kernel: expected a version MAJOR.MINOR such as 6.12, got '{}'", value));
    return v;
}

HzChoice kernel_hz_choice(const po::variables_map& vm) {
    HzChoice choice;
    if (vm.count("hz")) choice.option = hz_option(vm);
    choice.force = vm["force-hz"].as<bool>();
    if (choice.force && !choice.option) throw UsageError("--force-hz: give the HZ to force with --hz");
    return choice;
}

std::optional<std::int64_t> slack_option(const po::variables_map& vm) {
    const std::string s = vm["slack"].as<std::string>();
    if (s == "off") return std::nullopt;
    if (s == "default") return -1;
    std::int64_t v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size() || v < 0 || v > (std::int64_t{1} << 32))
        throw UsageError(fmt::format("--slack: expected off, default or a number of jiffies 0..2^32, got '{}'", s));
    return v;
}

classic::Geometry geometry_option(const po::variables_map& vm) {
    return vm["base-small"].as<bool>() ? classic::Geometry::base_small() : classic::Geometry::normal();
}

std::string choice_option(const po::variables_map& vm, std::string_view name,
                          std::initializer_list<std::string_view> choices) {
    const std::string value = vm[std::string(name)].as<std::string>();
    for (std::string_view c : choices)
        if (value == c) return value;
    throw UsageError(fmt::format("--{}: expected {}, got '{}'", name, fmt::join(choices, ", "), value));
}

Design parse_design(std::string_view value, std::string_view option) {
    if (const auto d = design_from_string(value); d && *d != Design::wheel) return *d;
    // The configurable wheel needs its geometry (sim/cli/design_option.hpp).
    throw UsageError(fmt::format("--{}: expected {}, got '{}'", option, design_names(), value));
}

Design design_option(const po::variables_map& vm, std::string_view name) {
    return parse_design(vm[std::string(name)].as<std::string>(), name);
}

} // namespace timersim::cli
