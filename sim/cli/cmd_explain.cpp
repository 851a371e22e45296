#include "sim/cli/seed_views.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/design_option.hpp"
#include "sim/report/format_time.hpp"
#include "sim/cli/timeout_arg.hpp"
#include "wheel/explain.hpp"

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

std::string late_words(std::int64_t late, unsigned hz) {
    if (late == 0) return "exactly on time";
    const std::string t = format_seconds(static_cast<long double>(late < 0 ? -late : late) / hz);
    return late > 0 ? fmt::format("{} ({}) late", jiffies_word(static_cast<Jiffies>(late)), t)
                    : fmt::format("{} ({}) EARLY", jiffies_word(static_cast<Jiffies>(-late)), t);
}

std::string explain_modern_text(Jiffies now, Jiffies expires, unsigned hz, std::optional<Jiffies> clk) {
    const ModernExplanation e = explain_modern(now, expires, hz, clk);
    const auto& wi = e.index;
    std::string out = fmt::format("Modern wheel (Linux 6.1, {} levels at HZ={})\n", e.depth, hz);
    const auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
    if (!clk) {
        line(fmt::format("base->clk is {} (an idle base is forwarded to jiffies before the index is computed).", e.clk));
    } else if (e.clk == now + 1) {
        line(fmt::format("base->clk is {} (--clk), one ahead of jiffies: the softirq of this jiffy has run, and "
                         "6.1 __run_timers() leaves clk one past the bucket it collected.",
                         e.clk));
    } else {
        line(fmt::format("base->clk is {} (--clk, {:+} against jiffies).", e.clk, jiffies_diff(e.clk, now)));
    }
    if (wi.past) {
        line(fmt::format("delta = expires - clk = {} is negative: the expiry is already in the past.",
                         jiffies_diff(expires, e.clk)));
        line(fmt::format("Such a timer goes to level 0, bucket clk & 63 = idx {}, with bucket_expiry = clk = {}.",
                         wi.idx, wi.bucket_expiry));
    } else {
        line(fmt::format("delta = expires - clk = {} jiffies ({}).", e.delta, format_jiffies_as_time(e.delta, hz)));
        if (wi.clamped) {
            line(fmt::format("That is at or beyond WHEEL_TIMEOUT_CUTOFF = {} jiffies, so the expiry is clamped to "
                             "clk + WHEEL_TIMEOUT_MAX = {} and placed in the last level, {}.",
                             modern::timeout_cutoff(e.depth), e.clk + modern::timeout_max(e.depth), wi.level));
        } else {
            line(fmt::format("Level {} holds deltas {} .. {}, so the timer goes to level {} (granularity {}, {}).",
                             wi.level, e.level_lo, e.level_hi, wi.level, jiffies_word(modern::level_granularity(wi.level)),
                             format_jiffies_as_time(modern::level_granularity(wi.level), hz)));
        }
        const unsigned shift = modern::level_shift(wi.level);
        const Jiffies placed = wi.clamped ? e.clk + modern::timeout_max(e.depth) : expires;
        line(fmt::format("Rounded up to the level granularity: q = ({} >> {}) + 1 = {}; bucket_expiry = q << {} = {}.",
                         placed, shift, wi.bucket_expiry >> shift, shift, wi.bucket_expiry));
        line(fmt::format("Bucket index idx = level offset {} + ({} & 63) = {} (what the timer_start tracepoint prints).",
                         modern::level_offset(wi.level), wi.bucket_expiry >> shift, wi.idx));
    }
    line(fmt::format("The softirq collects that bucket when clk reaches {}: the timer fires {}.", wi.bucket_expiry,
                     late_words(e.late, hz)));
    line("It never moves: the modern wheel does not cascade (a re-arm into the same bucket changes nothing).");
    return out;
}

std::string explain_classic_text(Jiffies now, Jiffies expires, unsigned hz, std::optional<std::int64_t> slack,
                                 const classic::Geometry& g, std::optional<Jiffies> clk) {
    const ClassicExplanation e = explain_classic(now, expires, slack, g, clk);
    std::string out = fmt::format("Classic wheel (Linux <= 4.7, tv1 of {} slots, tv2..tv5 of {}, HZ={})\n",
                                  g.tvr_size(), g.tvn_size(), hz);
    const auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
    if (!slack) {
        line("Slack is off: expires stays as requested.");
    } else if (e.expires == e.requested) {
        line(*slack < 0 ? fmt::format("mod_timer() slack: the delay is {} jiffies; below 256 the default slack adds nothing.",
                                      jiffies_diff(expires, now))
                        : "mod_timer() slack leaves expires unchanged (it already has the most trailing zero bits).");
    } else {
        line(fmt::format("mod_timer() applies slack ({}): expires {} becomes {} (+{} jiffies, {}), the value with the "
                         "most trailing zero bits within the limit.",
                         *slack < 0 ? "default: delay/256" : fmt::format("fixed {} jiffies", *slack), e.requested,
                         e.expires, e.expires - e.requested, format_jiffies_as_time(e.expires - e.requested, hz)));
    }
    for (std::size_t i = 0; i < e.hops.size(); ++i) {
        const auto& h = e.hops[i];
        const Jiffies d = e.expires - h.timer_jiffies;
        std::string where = fmt::format("tv{}[{}]", h.slot.array, h.slot.slot);
        std::string why;
        if (h.slot.past)
            why = "the expiry is in the past, so it goes to tv1 at timer_jiffies' own slot";
        else if (h.slot.clamped)
            why = fmt::format("d exceeds MAX_TVAL = {}, so the slot is computed from timer_jiffies + MAX_TVAL", g.max_tval());
        else if (h.slot.array == 1)
            why = fmt::format("d < {}, so tv1 slot expires & {}", g.tvr_size(), g.tvr_size() - 1);
        else
            why = fmt::format("{} <= d < {}, so tv{} slot (expires >> {}) & {}", h.slot.array == 2 ? g.tvr_size() : g.range_end(h.slot.array - 1),
                              h.slot.array == 5 ? g.max_tval() + 1 : g.range_end(h.slot.array), h.slot.array,
                              g.shift(h.slot.array), g.tvn_size() - 1);
        if (h.laps > 1)
            where += fmt::format(", then laps tv5 {} more times (one slot earlier each lap, every {} jiffies)",
                                 h.laps - 1, (g.max_tval() + 1) - (Jiffies{1} << g.shift(5)));
        if (i == 0)
            line(fmt::format("At timer_jiffies {}: d = expires - timer_jiffies = {} ({}); {} -> {}.", h.timer_jiffies,
                             d, format_jiffies_as_time(d, hz), why, where));
        else
            line(fmt::format("At jiffy {} (timer_jiffies reaches the start of that slot) the slot is cascaded: "
                             "d = {}; {} -> {}.",
                             h.timer_jiffies, d, why, where));
    }
    std::uint64_t cascades = 0;
    for (const auto& h : e.hops) cascades += h.laps;
    --cascades; // the first placement is not a cascade
    line(fmt::format("It runs in the loop step where timer_jiffies == {}, after {} cascade{}: {} against the request.",
                     e.runs_at, cascades, cascades == 1 ? "" : "s",
                     late_words(jiffies_diff(e.runs_at, e.requested), hz)));
    return out;
}

std::string explain_wheel_text(Jiffies now, Jiffies expires, unsigned hz, const std::string& name,
                               const WheelGeometry& g, std::optional<Jiffies> clk) {
    const WheelExplanation e = explain_wheel(g, now, expires, clk);
    std::string out = fmt::format("Configurable wheel {} ({}, HZ={})\n", name, to_string(g), hz);
    const auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
    const bool cascade = g.mode == WheelMode::cascade;
    const char* clock = cascade ? "timer_jiffies" : "clk";
    for (std::size_t i = 0; i < e.hops.size(); ++i) {
        const WheelHop& h = e.hops[i];
        const Jiffies d = expires - h.clock;
        std::string why;
        if (h.past)
            why = fmt::format("the expiry is in the past: level 0, the slot of {} itself", clock);
        else if (h.clamped)
            why = cascade ? fmt::format("d exceeds MAX_TVAL = {}: placed as if at {} + MAX_TVAL", g.max_tval(), clock)
                          : fmt::format("d is at or beyond the cutoff {}: clamped to {} + {} in the last level",
                                        g.cutoff(), clock, g.timeout_max());
        else
            why = fmt::format("level {} (granularity {}) holds it; slot = ({}) >> {} & {}", h.level,
                              jiffies_word(g.granularity(h.level)),
                              g.round == WheelRound::up && h.level > 0 ? "expires rounded up" : "expires", g.shift[h.level],
                              g.slots(h.level) - 1);
        const std::string where = fmt::format("level {} slot {} (bucket {})", h.level, h.slot, g.offset(h.level) + h.slot);
        if (i == 0)
            line(fmt::format("At {} {}: d = {} ({}); {} -> {}.", clock, h.clock, d, format_jiffies_as_time(d, hz), why, where));
        else
            line(fmt::format("At jiffy {} that slot is cascaded: d = {}; {} -> {}.", h.clock, jiffies_diff(expires, h.clock),
                             why, where));
    }
    if (e.truncated) line("... and so on: it keeps lapping the last level until its expiry is in range.");
    line(fmt::format("It fires at jiffy {}{}: {}.", e.fires_at,
                     cascade ? fmt::format(", after {} cascade{}", e.hops.size() - 1, e.hops.size() == 2 ? "" : "s")
                             : std::string(", never moving"),
                     late_words(e.late, hz)));
    return out;
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
         "modern, classic or both, wheel:SPEC (timersim levels --help), or one of the seeds' wheels: scheme4, "
         "scheme5, scheme6, netty, cog (scheme1 and scheme2 are lists: nothing to explain)");
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
                        "timersim explain --hz 1000 --timeout 36 --design wheel:rfc-2015",
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
    if (!wheel && design_text != "both" && design_text != "modern" && design_text != "classic") {
        const Design d = parse_design(design_text);
        if (d == Design::heap) throw UsageError("explain does not apply to heap: it has no buckets");
        const std::string text = explain_seed_text(d, now, expires, hz, clk);
        fmt::print("A timer armed at jiffies {} to expire at {} ({:+} jiffies, {}), HZ={}.\n\n{}", now, expires,
                   jiffies_diff(expires, now), format_seconds(static_cast<long double>(jiffies_diff(expires, now)) / hz),
                   hz, text);
        return kExitOk;
    }
    const std::string design = wheel ? "wheel" : choice_option(*vm, "design", {"modern", "classic", "both"});
    const std::optional<std::int64_t> slack = slack_option(*vm);
    const classic::Geometry geometry = geometry_option(*vm);

    std::string out = fmt::format("A timer armed at jiffies {} to expire at {} ({:+} jiffies, {}), HZ={}.\n\n", now,
                                  expires, jiffies_diff(expires, now),
                                  format_seconds(static_cast<long double>(jiffies_diff(expires, now)) / hz), hz);
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
