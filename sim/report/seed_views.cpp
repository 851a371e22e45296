// GCC 12 inlines a whole one-timer queue here and, seeing the list-head
// handles as constants, warns of an out-of-bounds index on a branch that
// cannot run (a head link is only ever an unlink's, never a fresh arm's).
#pragma GCC diagnostic ignored "-Warray-bounds"

#include "sim/report/seed_views.hpp"

#include "sim/report/format_time.hpp"
#include "sim/report/step_report.hpp"
#include "wheel/seeds/cog_wheel.hpp"
#include "wheel/seeds/netty_wheel.hpp"
#include "wheel/seeds/scheme4_queue.hpp"
#include "wheel/seeds/scheme5_queue.hpp"
#include "wheel/seeds/scheme6_queue.hpp"
#include "wheel/views/cog_explain.hpp"

#include <fmt/core.h>

namespace timersim {

namespace {

void refuse_lists(Design d, std::string_view command) {
    if (d == Design::scheme1 || d == Design::scheme2)
        throw SeedViewError(fmt::format("{} does not apply to {}: it keeps one list, no buckets or levels (every "
                                     "timer fires on its exact tick)",
                                     command, to_string(d)));
}

// The queue of design Q at `clk`, one timer armed for `expires`: where it
// is and the row it is drawn in.
template <class Q>
std::string placed(Jiffies clk, Jiffies expires, unsigned hz, std::string_view rule) {
    Q q(typename Q::Config{.hz = hz, .start_jiffies = clk});
    const TimerId id = q.create();
    q.arm(id, expires);
    const Placement p = q.placement(id);
    const QueueLayout l = q.layout();
    const LayoutRow& row = l.rows.at(p.level);
    std::string where = row.counts.empty() ? row.name : fmt::format("{}[{}]", row.name, p.slot);
    std::string out = fmt::format("{} ({}):\n", to_string(design_from_string(Q::name).value()),
                                  design_info(*design_from_string(Q::name)).summary);
    out += fmt::format("  placed by delta = expires - clk = {} from clk {}: {}.\n", jiffies_diff(expires, clk), clk,
                       where);
    out += fmt::format("  {}\n", rule);
    const std::int64_t late = jiffies_diff(p.bucket_expiry, expires);
    out += fmt::format("  It fires at jiffies {}{}.\n", p.bucket_expiry,
                       late == 0 ? ", exactly on time"
                                 : fmt::format(", {} after its expiry (an expiry in the past runs at the next tick)",
                                               jiffies_word(static_cast<Jiffies>(late))));
    return out;
}

// cog's story: the ring it is placed in, every cascade on its way down (at
// which tick, into which ring and slot), and the tick ring 0 drains it
// (wheel/views/cog_explain.hpp). A lapping timeout's laps of the top ring are
// summed up after the first few.
std::string explain_cog_text(Jiffies clk, Jiffies expires) {
    constexpr unsigned rings = CogWheel::kDefaultRings;
    const CogExplanation e = explain_cog(clk, expires, rings);
    const auto where = [](const CogHop& h) { return fmt::format("ring{}[{}]", h.ring, h.slot); };
    const auto range = [](unsigned ring) {
        return ring == 0 ? std::string("0 .. 63")
                         : fmt::format("{} .. {}", Jiffies{1} << (6 * ring), (Jiffies{1} << (6 * (ring + 1))) - 1);
    };
    const auto say = [](std::string& out, const std::string& sentence) { put(out, "  " + sentence, 4); };
    const CogHop& first = e.hops.front();
    std::string out = fmt::format("cog ({}):\n", design_info(Design::cog).summary);
    if (first.past)
        say(out, fmt::format("Armed at clk {} for a tick already past: {} (clk & 63), the next tick.", clk,
                             where(first)));
    else
        say(out, fmt::format("Placed by delta = expires - clk = {} from clk {}: {} (delta {}{}), slot = (expires "
                             ">> {}) & 63.",
                             jiffies_diff(expires, clk), clk, where(first), range(first.ring),
                             first.clamped ? fmt::format("; beyond the top ring, placed as if at clk + 2^{} - 1",
                                                         6 * rings)
                                           : std::string(),
                             6 * first.ring));
    constexpr std::size_t kShown = 8; // hops told one by one; the rest (laps) summed up
    for (std::size_t i = 1; i < e.hops.size(); ++i) {
        if (i > kShown && i + 1 < e.hops.size()) {
            say(out, fmt::format("... {} more cascades of the top ring, one every 2^{} ticks ...",
                                 e.hops.size() - 1 - i, 6 * rings));
            i = e.hops.size() - 1;
        }
        const CogHop& from = e.hops[i - 1];
        const CogHop& to = e.hops[i];
        say(out, fmt::format("At tick {} (a multiple of {}) {} cascades: delta {} -> {}.", to.clk,
                             Jiffies{1} << (6 * from.ring), where(from), jiffies_diff(expires, to.clk), where(to)));
    }
    const std::int64_t late = jiffies_diff(e.fires_at, expires);
    const std::size_t cascades = e.hops.size() - 1;
    say(out, fmt::format("It fires on tick {} ({} drains), after {} cascade{}: {}.", e.fires_at,
                         where(e.hops.back()), cascades, cascades == 1 ? "" : "s",
                         late == 0 ? std::string("exactly on time")
                                   : fmt::format("{} after its expiry (an expiry in the past runs at the next tick)",
                                                 jiffies_word(static_cast<Jiffies>(late)))));
    return out;
}

} // namespace

std::string explain_seed_text(Design d, Jiffies now, Jiffies expires, unsigned hz, std::optional<Jiffies> clk) {
    refuse_lists(d, "explain");
    const Jiffies c = clk.value_or(now);
    const Jiffies delta = expires - c;
    const bool past = time_before(expires, c);
    switch (d) {
    case Design::scheme4:
        return placed<Scheme4Queue>(
            c, expires, hz,
            past ? "An expiry in the past goes to the cursor's slot."
            : delta < 256 ? fmt::format("Within one revolution (delta < 256): slot expires & 255 = {}.", expires & 255)
                          : "A revolution or more ahead: the overflow list, walked at every revolution start "
                            "(cursor at slot 0), which moves it into slot expires & 255 in the revolution that "
                            "holds its tick.");
    case Design::scheme5:
        return placed<Scheme5Queue>(c, expires, hz,
                                    fmt::format("Slot expires & 255 = {}, kept sorted by expiry: the tick takes it "
                                                "when the cursor reaches the slot in its revolution ({} later).",
                                                (past ? c : expires) & 255, past ? 0 : delta / 256));
    case Design::scheme6:
        return placed<Scheme6Queue>(c, expires, hz,
                                    fmt::format("Slot expires & 255 = {} with {} rounds (delta / 256): each visit of "
                                                "the slot decrements them, the visit at 0 expires it.",
                                                (past ? c : expires) & 255, past ? 0 : delta / 256));
    case Design::netty:
        return placed<NettyWheel>(
            c, expires, hz,
            fmt::format("newTimeout() puts it in the queue; the next tick's transferTimeoutsToBuckets() moves it "
                        "to bucket max(deadline, tick) & 511 = {} with remainingRounds = (deadline - tick) / 512 "
                        "= {}, then each visit of the bucket decrements them.",
                        (past ? c : expires) & 511, past ? 0 : delta / 512));
    case Design::cog: return explain_cog_text(c, expires);
    default: break;
    }
    throw SeedViewError(fmt::format("explain has no seed view of {}", to_string(d)));
}

std::string seed_levels_text(Design d, unsigned hz) {
    refuse_lists(d, "levels");
    const auto ring = [&](unsigned slots, std::string_view what) {
        return fmt::format(
            "{} at HZ={}: one ring of {} slots of 1 jiffy ({}); a revolution is {} jiffies ({}).\n{}\n",
            to_string(d), hz, slots, format_jiffies_as_time(1, hz), slots, format_jiffies_as_time(slots, hz), what);
    };
    switch (d) {
    case Design::scheme4:
        return ring(256, "Delays below a revolution go to slot expires & 255; longer ones to the overflow list,\n"
                         "walked once a revolution. Every timer fires on its exact tick.");
    case Design::scheme5:
        return ring(256, "Slot expires & 255, each slot sorted by expiry: later revolutions wait behind.\n"
                         "Every timer fires on its exact tick.");
    case Design::scheme6:
        return ring(256, "Slot expires & 255 with rounds = delta / 256, decremented at each visit of the slot.\n"
                         "Every timer fires on its exact tick.");
    case Design::netty:
        return ring(NettyWheel::kDefaultTicksPerWheel,
                    "Netty HashedWheelTimer: new timeouts wait in a queue for the next tick (at most 100,000\n"
                    "move into buckets per tick), bucket expires & 511 with remainingRounds; cancelled ones\n"
                    "are removed at the next tick. Exact unless the transfer limit delays a timeout.");
    case Design::cog: {
        std::string out = fmt::format("cog at HZ={}: {} rings of 64 buckets, base 64; cascading, so every timer fires "
                                      "on its exact tick.\n\n",
                                      hz, CogWheel::kDefaultRings);
        out += fmt::format("{:>4}  {:<32}  {:<34}  {}\n", "Ring", "Bucket width", "Delta range (jiffies)",
                           "Range (time)");
        for (unsigned r = 0; r < CogWheel::kDefaultRings; ++r) {
            const Jiffies width = Jiffies{1} << (6 * r);
            const Jiffies lo = r == 0 ? 0 : width;
            const Jiffies hi = (Jiffies{1} << (6 * (r + 1))) - 1;
            out += fmt::format("{:>4}  {:<32}  {:<34}  {} .. {}\n", r,
                               fmt::format("{} ({})", jiffies_word(width), format_jiffies_as_time(width, hz)),
                               fmt::format("{} .. {}", lo, hi), format_jiffies_as_time(lo, hz),
                               format_jiffies_as_time(hi, hz));
        }
        out += "\nA longer delta is placed as if it were 2^48 - 1 and laps the top ring, still firing\n"
               "exactly. Cancelling leaves a tombstone in the bucket until the bucket drains.\n";
        return out;
    }
    default: break;
    }
    throw SeedViewError(fmt::format("levels has no seed view of {}", to_string(d)));
}

} // namespace timersim
