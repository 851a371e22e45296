#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/design_option.hpp"
#include "sim/report/format_time.hpp"
#include "sim/report/seed_views.hpp"
#include "wheel/kernel/classic_levels.hpp"
#include "wheel/kernel/modern_levels.hpp"

#include <fmt/core.h>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

std::string modern_table(unsigned hz) {
    using namespace modern;
    const unsigned depth = depth_for_hz(hz);
    std::string out = fmt::format(
        "Modern wheel (Linux 4.8+, as in 6.1 kernel/time/timer.c) at HZ={}: {} levels of {} buckets,\n"
        "granularity x8 per level; a timer is placed once by delta = expires - clk and rounded up.\n\n",
        hz, depth, kLevelSize);
    out += fmt::format("{:>5} {:>6}  {:<28}  {:<28}  {}\n", "Level", "Offset", "Granularity",
                       "Delta range (jiffies)", "Range (time)");
    for (unsigned level = 0; level < depth; ++level) {
        const Jiffies gran = level_granularity(level);
        const Jiffies lo = level_start(level);
        const bool last = level + 1 == depth;
        const Jiffies hi = last ? timeout_cutoff(depth) - 1 : level_start(level + 1) - 1;
        out += fmt::format("{:>5} {:>6}  {:<28}  {:<28}  {} .. {}{}\n", level, level_offset(level),
                           fmt::format("{} ({})", jiffies_word(gran), format_jiffies_as_time(gran, hz)),
                           fmt::format("{} .. {}", lo, hi), format_jiffies_as_time(lo, hz),
                           format_jiffies_as_time(hi, hz), last ? " (+ clamped)" : "");
    }
    out += fmt::format(
        "\nA timer at level L fires 1 .. 8^L jiffies after its expiry (exactly 1 at level 0; at most\n"
        "12.7% of its delta above level 0). Deltas >= WHEEL_TIMEOUT_CUTOFF = {} jiffies ({}) are\n"
        "clamped to clk + WHEEL_TIMEOUT_MAX = {} jiffies ({}) and fire early. Expiries in the past\n"
        "go to level 0 bucket clk & 63 and fire at the next softirq.\n",
        timeout_cutoff(depth), format_jiffies_as_time(timeout_cutoff(depth), hz), timeout_max(depth),
        format_jiffies_as_time(timeout_max(depth), hz));
    return out;
}

// modern-6.9: the same wheel on each of a CPU's three bases.
std::string modern69_preface() {
    return "Linux 6.9+ (modern-6.9): three timer bases per CPU, each this wheel with its own clk,\n"
           "next_expiry and bitmaps. 6.9 get_timer_cpu_base() picks the base from the timer's flags:\n"
           "  BASE_LOCAL   pinned timers (TIMER_PINNED; add_timer_on() sets it since 6.9): run by this CPU only\n"
           "  BASE_GLOBAL  the others: an idle CPU's are expired by the migrator of its group\n"
           "               (tmigr_handle_remote() -> timer_expire_remote())\n"
           "  BASE_DEF     deferrable timers (TIMER_DEFERRABLE), pinned or not: never wake an idle CPU\n"
           "The softirq runs BASE_LOCAL, BASE_GLOBAL, then BASE_DEF (6.9 run_timer_softirq()).\n\n";
}

std::string classic_table(unsigned hz, const classic::Geometry& g, bool small) {
    std::string out = fmt::format(
        "Classic wheel (Linux <= 4.7 kernel/time/timer.c{}) at HZ={}: tv1 of {} slots, tv2..tv5 of {};\n"
        "a timer is placed by d = expires - timer_jiffies and cascaded down as that shrinks, so it\n"
        "always fires at exactly its expiry.\n\n",
        small ? ", CONFIG_BASE_SMALL" : "", hz, g.tvr_size(), g.tvn_size());
    out += fmt::format("{:>5} {:>5}  {:<26}  {:<30}  {:<22}  {}\n", "Array", "Slots", "Slot width", "Delta range (jiffies)",
                       "Range (time)", "Cascaded when T is a multiple of");
    for (unsigned array = 1; array <= classic::kArrays; ++array) {
        const Jiffies width = Jiffies{1} << g.shift(array);
        const Jiffies lo = array == 1 ? 0 : g.range_end(array - 1);
        const Jiffies hi = array == classic::kArrays ? g.max_tval() : g.range_end(array) - 1;
        out += fmt::format("{:>5} {:>5}  {:<26}  {:<30}  {:<22}  {}\n", fmt::format("tv{}", array), g.slots(array),
                           fmt::format("{} ({})", jiffies_word(width), format_jiffies_as_time(width, hz)),
                           fmt::format("{} .. {}", lo, hi),
                           fmt::format("{} .. {}", format_jiffies_as_time(lo, hz), format_jiffies_as_time(hi, hz)),
                           array == 1 ? std::string("- (one slot runs per jiffy)")
                                      : fmt::format("{} ({})", width, format_jiffies_as_time(width, hz)));
    }
    out += fmt::format(
        "\nMAX_TVAL = {} jiffies ({}): a longer delta is placed as if it were MAX_TVAL and laps tv5,\n"
        "still firing exactly. mod_timer() adds slack first (default: delay/256 for delays >= 256\n"
        "jiffies, rounded to the most trailing zero bits).\n",
        g.max_tval(), format_jiffies_as_time(g.max_tval(), hz));
    return out;
}

// Any geometry of the configurable wheel: the same columns as the kernel
// wheels' tables, from wheel/configurable/wheel_spec.hpp's rules.
std::string wheel_table(unsigned hz, const std::string& name, const WheelGeometry& g) {
    const bool cascade = g.mode == WheelMode::cascade;
    const bool up = g.round == WheelRound::up;
    std::string out = fmt::format(
        "Configurable wheel {} at HZ={}:\n{}\n{} levels, {} buckets ({}), rounding {}.\n\n", name, hz, to_string(g),
        g.depth, g.buckets(),
        cascade ? "cascading: placed by distance, moved down a level as it shrinks"
                : "in place: placed once by delta = expires - clk, expired from that bucket",
        up ? "up" : "down");
    out += fmt::format("{:>5} {:>6} {:>6}  {:<28}  {:<28}  {}\n", "Level", "Offset", "Slots", "Granularity",
                       "Delta range (jiffies)", "Range (time)");
    for (unsigned level = 0; level < g.depth; ++level) {
        const Jiffies gran = g.granularity(level);
        const bool last = level + 1 == g.depth;
        const Jiffies lo = cascade ? (level == 0 ? 0 : g.range_end(level - 1)) : g.level_start(level);
        const Jiffies hi = cascade ? (last ? g.max_tval() : g.range_end(level) - 1)
                                   : (last ? g.cutoff() : g.level_start(level + 1)) - 1;
        out += fmt::format("{:>5} {:>6} {:>6}  {:<28}  {:<28}  {} .. {}{}\n", level, g.offset(level), g.slots(level),
                           fmt::format("{} ({})", jiffies_word(gran), format_jiffies_as_time(gran, hz)),
                           fmt::format("{} .. {}", lo, hi), format_jiffies_as_time(lo, hz),
                           format_jiffies_as_time(hi, hz), last ? (cascade ? " (+ laps)" : " (+ clamped)") : "");
    }
    out += "\n";
    if (cascade && !up)
        out += fmt::format("Every timer fires exactly at its expiry, after up to {} cascades. Beyond MAX_TVAL = {} jiffies\n"
                           "({}) a timer is placed as if at MAX_TVAL and laps the last level.\n",
                           g.depth - 1, g.max_tval(), format_jiffies_as_time(g.max_tval(), hz));
    else if (cascade)
        out += fmt::format("A timer above level 0 sits in the slot of its expiry rounded up to the slot width and is\n"
                           "cascaded once, at that time, straight into the slot that runs: up to one granularity late,\n"
                           "never early. Beyond MAX_TVAL = {} jiffies ({}) it laps the last level.\n",
                           g.max_tval(), format_jiffies_as_time(g.max_tval(), hz));
    else
        out += fmt::format("A timer at level L fires {} its expiry ({}). Deltas >= the cutoff {} jiffies ({}) are\n"
                           "clamped to clk + {} jiffies ({}) and fire early. Expiries in the past fire at the next softirq.\n",
                           up ? "1 .. granularity(L) jiffies after" : "0 .. granularity(L)-1 jiffies BEFORE",
                           up ? "never early" : "rounding down in place fires EARLY", g.cutoff(),
                           format_jiffies_as_time(g.cutoff(), hz), g.timeout_max(),
                           format_jiffies_as_time(g.timeout_max(), hz));
    return out;
}

} // namespace

int run_levels(std::span<const std::string> args) {
    po::options_description options("Options");
    add_hz_option(options);
    options.add_options()
        ("design", po::value<std::string>()->default_value("both"),
         "modern, classic or both, modern-6.9 (modern's levels on each of its three bases), wheel:SPEC (below), or "
         "one of the seeds' wheels: scheme4, scheme5, scheme6, netty, cog")
        ("base-small", po::bool_switch(), "classic wheel with CONFIG_BASE_SMALL (64-slot tv1, 16-slot tv2..tv5)");
    const std::string description = "Print each wheel's levels: bucket offset, granularity and the range of\n"
                                    "timeouts it holds, in jiffies and in time at the chosen HZ.\n\n" +
                                    wheel_spec_help();
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim levels [options]",
            .description = description,
            .examples = "timersim levels\ntimersim levels --hz 1000 --design modern\n"
                        "timersim levels --hz 100 --design classic --base-small\n"
                        "timersim levels --design wheel:rfc-2015\n"
                        "timersim levels --design modern-6.9\n"
                        "timersim levels --design wheel:bits=8x4:mode=cascade",
        });
    if (!vm) return kExitOk;
    const unsigned hz = hz_option(*vm);
    if ((*vm)["design"].as<std::string>().starts_with("wheel")) {
        const DesignChoice c = design_choice((*vm)["design"].as<std::string>(), {}, hz);
        fmt::print("{}", wheel_table(hz, c.name, c.wheel->geometry(hz)));
        return kExitOk;
    }
    const std::string design_text = (*vm)["design"].as<std::string>();
    if (design_from_string(design_text) == Design::modern_6_9) {
        fmt::print("{}", modern69_preface() + modern_table(hz));
        return kExitOk;
    }
    if (design_text != "both" && design_text != "modern" && design_text != "classic") {
        const Design d = parse_design(design_text);
        if (d == Design::heap) throw UsageError("levels does not apply to heap: it has no levels");
        try {
            fmt::print("{}", seed_levels_text(d, hz));
        } catch (const SeedViewError& e) {
            throw UsageError(e.what());
        }
        return kExitOk;
    }
    const std::string design = choice_option(*vm, "design", {"modern", "classic", "both"});
    const bool small = (*vm)["base-small"].as<bool>();
    std::string out;
    if (design != "classic") out += modern_table(hz);
    if (design == "both") out += "\n";
    if (design != "modern")
        out += classic_table(hz, geometry_option(*vm), small);
    fmt::print("{}", out);
    return kExitOk;
}

} // namespace timersim::cli
