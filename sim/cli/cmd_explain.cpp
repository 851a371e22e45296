#include "sim/report/seed_views.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/design_option.hpp"
#include "sim/report/explain_report.hpp"
#include "sim/cli/timeout_arg.hpp"

#include <fmt/core.h>

#include <charconv>
#include <optional>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

Jiffies parse_jiffies(const std::string& s, std::string_view option) {
    Jiffies v = 0;
    const auto [end, ec] = std::from_chars(s.data(), s.data() + s.size(), v);
    if (ec != std::errc{} || end != s.data() + s.size())
        throw UsageError(fmt::format("{}: expected a jiffies value 0..2^64-1, got '{}'", option, s));
    return v;
}


} // namespace

int run_explain(std::span<const std::string> args) {
    po::options_description options("Options");
    add_hz_option(options);
    add_classic_options(options);
    options.add_options()
        ("timeout", po::value<std::string>(), "relative timeout: jiffies (36) or time with a unit (144ms, 1.5s, 2h)")
        ("now", po::value<std::string>(), "jiffies when the timer is armed (default: INITIAL_JIFFIES = 2^32 - 300*HZ)")
        ("expires", po::value<std::string>(), "absolute expiry in jiffies (instead of --timeout)")
        ("clk", po::value<std::string>(),
         "the wheel's own clock the placement is computed from: modern base->clk (after forward_timer_base()), "
         "classic timer_jiffies (default: --now; right after a tick's softirq ran, both are jiffies + 1)")
        ("design", po::value<std::string>()->default_value("both"),
         "modern, classic or both, modern-6.9 (its three timer bases), wheel:SPEC (timersim levels --help), or one "
         "of the seeds' wheels: scheme4, scheme5, scheme6, netty, cog (scheme1 and scheme2 are lists: nothing to "
         "explain)")
        ("pinned", po::bool_switch(), "modern-6.9: a pinned timer (TIMER_PINNED), queued on BASE_LOCAL")
        ("deferrable", po::bool_switch(), "modern-6.9: a deferrable timer (TIMER_DEFERRABLE), queued on BASE_DEF");
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim explain (--timeout T | --expires E) [--now J] [--clk C] [options]",
            .description = "Explain, one sentence per step, where a timer armed with mod_timer() lands in\n"
                           "each wheel, why, every cascade it goes through, and when it fires.",
            .examples = "timersim explain --hz 1000 --timeout 36\n"
                        "timersim explain --hz 250 --timeout 60s\n"
                        "timersim explain --now 0 --expires 16640 --design classic --slack off\n"
                        "timersim explain --now 1000 --clk 1001 --expires 1063 --design modern\n"
                        "timersim explain --hz 1000 --timeout 36 --design wheel:rfc-2015\n"
                        "timersim explain --timeout 5000 --design modern-6.9 --pinned",
        });
    if (!vm) return kExitOk;
    const unsigned hz = hz_option(*vm);
    const Jiffies now = vm->count("now") ? parse_jiffies((*vm)["now"].as<std::string>(), "--now") : initial_jiffies(hz);
    if (vm->count("timeout") == vm->count("expires"))
        throw UsageError("give exactly one of --timeout and --expires");
    Jiffies expires = 0;
    if (vm->count("timeout")) {
        try {
            expires = now + parse_timeout_jiffies((*vm)["timeout"].as<std::string>(), hz);
        } catch (const std::invalid_argument& e) {
            throw UsageError(fmt::format("--timeout: {}", e.what()));
        }
    } else {
        expires = parse_jiffies((*vm)["expires"].as<std::string>(), "--expires");
    }
    std::optional<Jiffies> clk;
    if (vm->count("clk")) clk = parse_jiffies((*vm)["clk"].as<std::string>(), "--clk");
    std::optional<DesignChoice> wheel;
    if ((*vm)["design"].as<std::string>().starts_with("wheel"))
        wheel = design_choice((*vm)["design"].as<std::string>(), {}, hz);
    const std::string design_text = (*vm)["design"].as<std::string>();
    const bool pinned = (*vm)["pinned"].as<bool>();
    const bool deferrable = (*vm)["deferrable"].as<bool>();
    const bool modern69 = !wheel && design_from_string(design_text) == Design::modern_6_9;
    if ((pinned || deferrable) && !modern69)
        throw UsageError(fmt::format("--{}: only modern-6.9 chooses a timer base by the timer's flags, not --design {}",
                                     pinned ? "pinned" : "deferrable", design_text));
    if (modern69) {
        fmt::print("{}\n{}", explain_title(now, expires, hz), explain_modern69_text(now, expires, hz, clk, pinned, deferrable));
        return kExitOk;
    }
    if (!wheel && design_text != "both" && design_text != "modern" && design_text != "classic") {
        const Design d = parse_design(design_text);
        if (d == Design::heap) throw UsageError("explain does not apply to heap: it has no buckets");
        std::string text;
        try {
            text = explain_seed_text(d, now, expires, hz, clk);
        } catch (const SeedViewError& e) {
            throw UsageError(e.what());
        }
        fmt::print("{}\n{}", explain_title(now, expires, hz), text);
        return kExitOk;
    }
    const std::string design = wheel ? "wheel" : choice_option(*vm, "design", {"modern", "classic", "both"});
    const std::optional<std::int64_t> slack = slack_option(*vm);
    const classic::Geometry geometry = geometry_option(*vm);

    std::string out = explain_title(now, expires, hz) + "\n";
    if (wheel) {
        fmt::print("{}{}", out, explain_wheel_text(now, expires, hz, wheel->name, wheel->wheel->geometry(hz), clk));
        return kExitOk;
    }
    if (design != "classic") out += explain_modern_text(now, expires, hz, clk);
    if (design == "both") out += "\n";
    if (design != "modern") out += explain_classic_text(now, expires, hz, slack, geometry, clk);
    fmt::print("{}", out);
    return kExitOk;
}

} // namespace timersim::cli
