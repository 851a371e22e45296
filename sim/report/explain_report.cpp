#include "sim/report/explain_report.hpp"

#include "sim/report/format_time.hpp"
#include "wheel/views/explain.hpp"

#include <fmt/core.h>

namespace timersim {

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

std::string explain_modern69_text(Jiffies now, Jiffies expires, unsigned hz, std::optional<Jiffies> clk, bool pinned,
                                  bool deferrable) {
    std::string out = "Timer bases (Linux 6.9+: BASE_LOCAL, BASE_GLOBAL and BASE_DEF on every CPU)\n";
    const auto line = [&](const std::string& s) { out += "  " + s + "\n"; };
    if (deferrable)
        line(fmt::format("The timer is deferrable{}: 6.9 get_timer_cpu_base() puts it on the arming CPU's BASE_DEF, "
                         "pinned or not. An idle CPU is not woken for it; it runs with the CPU's next softirq.",
                         pinned ? " (and pinned)" : ""));
    else if (pinned)
        line("The timer is pinned (TIMER_PINNED: a pinned timer's mod_timer(), or add_timer_on(), which sets it since "
             "6.9): 6.9 get_timer_cpu_base() puts it on the arming CPU's BASE_LOCAL, which only that CPU runs; an "
             "idle CPU wakes for it itself.");
    else
        line("The timer is neither pinned nor deferrable: 6.9 get_timer_cpu_base() puts it on the arming CPU's "
             "BASE_GLOBAL (6.9 dropped get_nohz_timer_target()'s push to a busy CPU). If that CPU is idle when it is "
             "due, the migrator of its group expires it remotely (6.9 tmigr_handle_remote() -> "
             "timer_expire_remote()).");
    line("Each base is the wheel below, with its own clk, next_expiry and bitmaps (the wheel's code is 6.1's); the "
         "softirq runs BASE_LOCAL, BASE_GLOBAL, then BASE_DEF (6.9 run_timer_softirq()).");
    return out + "\n" + explain_modern_text(now, expires, hz, clk);
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

std::string explain_title(Jiffies now, Jiffies expires, unsigned hz) {
    return fmt::format("A timer armed at jiffies {} to expire at {} ({:+} jiffies, {}), HZ={}.\n", now, expires,
                       jiffies_diff(expires, now), format_seconds(static_cast<long double>(jiffies_diff(expires, now)) / hz),
                       hz);
}

// The configurable wheel (wheel/configurable/wheel_spec.hpp), hop by hop as explain_wheel()
// places it.
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

} // namespace timersim
