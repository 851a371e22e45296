#include "sim/report/step_report.hpp"

#include "sim/report/format_time.hpp"
#include "sim/report/json.hpp"
#include "wheel/views/wheel_snapshot.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <algorithm>
#include <type_traits>

namespace timersim {

namespace {

// Per tick and wheel, at most this many fired / cascaded / armed timers are
// listed one per line; the rest are counted ("... and N more"). JSON lists all.
constexpr std::size_t kListed = 5;
// Grid geometry: "  " + 5-character label + "|" + 64 cells + "|" + 7-digit total.
constexpr std::size_t kLabelWidth = 5;
constexpr std::size_t kCellsColumn = 2 + kLabelWidth + 1;
constexpr std::size_t kCellsPerRow = 64;


// Appends `text` as one or more lines of at most kStepColumns, breaking at spaces
// and indenting continuation lines, so long numbers never push a line past
// the terminal edge.
} // namespace

void put(std::string& out, std::string_view text, std::size_t indent) {
    std::size_t first = 0;
    while (text.size() > kStepColumns - first) {
        const std::size_t room = kStepColumns - first;
        std::size_t cut = text.rfind(' ', room);
        if (cut == std::string_view::npos || cut <= indent) cut = room; // no space: hard break
        out.append(first, ' ');
        out.append(text.substr(0, cut));
        out += '\n';
        text.remove_prefix(cut);
        while (!text.empty() && text.front() == ' ') text.remove_prefix(1);
        first = indent;
    }
    out.append(first, ' ');
    out.append(text);
    out += '\n';
}

std::string plural(std::uint64_t n, std::string_view one, std::string_view many) {
    return fmt::format("{} {}", n, n == 1 ? one : many);
}

namespace {

std::string late_text(std::int64_t late, unsigned hz) {
    if (late == 0) return "exactly on time";
    const Jiffies magnitude = late < 0 ? static_cast<Jiffies>(-late) : static_cast<Jiffies>(late);
    return fmt::format("{} ({}) {}", jiffies_word(magnitude), format_jiffies_as_time(magnitude, hz),
                       late > 0 ? "late" : "EARLY");
}

// A jiffy as a tick number relative to the start, which is what the frames are numbered by.
std::string tick_of(Jiffies j, const View& v) {
    const std::int64_t d = jiffies_diff(j, v.start);
    return d < 0 ? fmt::format("tick {} (before the start)", d) : fmt::format("tick {}", d);
}

std::string timer_name(std::uint32_t t, const View& v) { return fmt::format("#{} ({})", t, v.labels[t]); }

// "L1[30]" or "tv2[17]": the row and column of the grid the timer is drawn in.
template <class Q>
std::string bucket_name(const Placement& p) {
    if constexpr (std::is_same_v<Q, ModernWheel>)
        return fmt::format("{}L{}[{}]", p.deferrable_base ? "def " : "", p.level, p.slot % modern::kLevelSize);
    else
        return fmt::format("tv{}[{}]", p.level, p.slot);
}

char cell(std::uint32_t count) {
    if (count == 0) return '.';
    if (count >= 10) return '+';
    return static_cast<char>('0' + count);
}

std::string ruler() {
    std::string r(kCellsColumn + kCellsPerRow + 1, ' ');
    for (std::size_t c = 0; c < kCellsPerRow; c += 8) {
        const std::string n = fmt::format("{}", c);
        r.replace(kCellsColumn + c, n.size(), n);
    }
    r.replace(kCellsColumn + kCellsPerRow - 1, 2, "63");
    return r + fmt::format("{:>7}", "timers") + "\n";
}

// One level as rows of up to 64 cells (classic tv1: 4 rows), each followed
// by a marker line when the level's pointer falls in that row.
void draw_level(std::string& out, const std::string& name, const LevelOccupancy& l) {
    for (std::size_t row = 0; row * kCellsPerRow < l.counts.size(); ++row) {
        const std::size_t first = row * kCellsPerRow;
        const std::size_t n = std::min(kCellsPerRow, l.counts.size() - first);
        std::string cells;
        std::uint64_t total = 0;
        for (std::size_t i = 0; i < n; ++i) {
            cells += cell(l.counts[first + i]);
            total += l.counts[first + i];
        }
        const std::string label = row == 0 ? name : fmt::format("+{}", first);
        out += fmt::format("  {:<{}}|{}|{:>7}\n", label, kLabelWidth, cells, total);
        if (l.pointer >= first && l.pointer < first + n)
            out += std::string(kCellsColumn + (l.pointer - first), ' ') + "^\n";
    }
}

template <class Namer>
void put_events(std::string& out, const TickReport& r, const View& v, const Namer& bucket_name);

template <class Q>
void put_events(std::string& out, const TickReport& r, const View& v) {
    put_events(out, r, v, [](const Placement& p) { return bucket_name<Q>(p); });
}

// The same with the buckets named by `bucket_name` (the seeds' designs name
// them from their layout).
template <class Namer>
void put_events(std::string& out, const TickReport& r, const View& v, const Namer& bucket_name) {
    const auto more = [&](std::size_t total, std::string_view what) {
        if (total > kListed) put(out, fmt::format("  ... and {} more {}", total - kListed, what));
    };
    for (std::size_t i = 0; i < r.fired.size() && i < kListed; ++i) {
        const Fired& f = r.fired[i];
        std::string s = fmt::format("  fired {}: asked for {}, {}", timer_name(f.timer, v), tick_of(f.requested, v),
                                    late_text(jiffies_diff(r.jiffies, f.requested), v.hz));
        put(out, s);
    }
    more(r.fired.size(), "fired");
    for (std::size_t i = 0; i < r.cascaded.size() && i < kListed; ++i) {
        const Moved& m = r.cascaded[i];
        put(out, fmt::format("  cascaded {}: {} -> {}", timer_name(m.timer, v), bucket_name(m.from),
                             bucket_name(m.to)));
    }
    more(r.cascaded.size(), "cascaded");
    bool cancels = false;
    for (std::size_t i = 0; i < r.armed.size() && i < kListed; ++i) {
        const Armed& a = r.armed[i];
        if (a.cancel) {
            cancels = true;
            put(out, a.at.pending ? fmt::format("  cancelled {}: removed from {} (due at {})",
                                                timer_name(a.timer, v), bucket_name(a.at),
                                                tick_of(a.at.bucket_expiry, v))
                                  : fmt::format("  cancelled {}: not pending, nothing to do", timer_name(a.timer, v)));
            continue;
        }
        std::string s = fmt::format("  armed {} for {}: ", timer_name(a.timer, v), tick_of(a.requested, v));
        switch (a.outcome) {
        case ArmOutcome::queued:
            s += fmt::format("{}, due at {}", bucket_name(a.at), tick_of(a.at.bucket_expiry, v));
            // Classic mod_timer() rounds expires up by apply_slack().
            if (a.at.expires != a.requested) s += fmt::format(" (slack {:+})", jiffies_diff(a.at.expires, a.requested));
            break;
        case ArmOutcome::same_bucket:
            s += fmt::format("same bucket {}, not moved", bucket_name(a.at));
            break;
        case ArmOutcome::same_expiry:
            s += "same expiry, nothing to do";
            break;
        case ArmOutcome::not_pending:
            s += "not pending, nothing to do";
            break;
        }
        put(out, s);
    }
    for (std::size_t i = kListed; i < r.armed.size() && !cancels; ++i) cancels = r.armed[i].cancel;
    more(r.armed.size(), cancels ? "armed or cancelled" : "armed");
}

std::string cost_text(const SoftirqCost& c) {
    return fmt::format("{} scanned, {} expired, {}", plural(c.buckets_scanned, "bucket", "buckets"), c.expired,
                       plural(c.cascade_moves, "cascade move", "cascade moves"));
}

} // namespace

std::string render_text(const ClassicWheel& q, const TickReport& r, const View& v) {
    const ClassicSnapshot s = snapshot(q);
    std::string out;
    put(out, fmt::format("classic (<= 4.7): timer_jiffies {}, {} pending", s.timer_jiffies, s.pending));
    if (!r.start) {
        std::string line = "  softirq raised (every tick): ";
        if (r.cost.jiffies_walked == 0) {
            line += "wheel empty, timer_jiffies set to jiffies";
        } else {
            line += cost_text(r.cost);
            std::vector<std::string> from;
            for (unsigned a = 2; a <= classic::kArrays; ++a)
                if (r.cost.cascade_moves_from_level[a])
                    from.push_back(fmt::format("{} from tv{}", r.cost.cascade_moves_from_level[a], a));
            if (!from.empty()) line += fmt::format(" ({})", fmt::join(from, ", "));
            // A softirq walks every jiffy from timer_jiffies up to jiffies;
            // more than one means it caught up on jiffies it had not processed.
            if (r.cost.jiffies_walked != 1) line += fmt::format("; walked {} jiffies", r.cost.jiffies_walked);
        }
        put(out, line);
    }
    put_events<ClassicWheel>(out, r, v);
    out += ruler();
    for (const auto& l : s.levels) draw_level(out, fmt::format("tv{}", l.level), l);
    return out;
}

namespace {

// "in 37", "none pending", "due", with ", stale" when a delete left it early.
std::string next_expiry_text(const ModernSnapshot& s) {
    std::string next;
    if (!s.timers_pending && !s.next_expiry_stale)
        next = "none pending";
    else if (time_after(s.next_expiry, s.jiffies))
        next = fmt::format("in {}", jiffies_diff(s.next_expiry, s.jiffies));
    else
        next = "due";
    if (s.next_expiry_stale) next += ", stale";
    return next;
}

} // namespace

std::string render_text(const ModernWheel& q, const TickReport& r, const View& v) {
    const ModernSnapshot s = snapshot(q);
    std::string out;
    put(out, fmt::format("modern (6.1): clk {}, next_expiry {} ({}), {} pending", s.clk, s.next_expiry,
                         next_expiry_text(s), s.pending));
    if (!r.start) {
        if (!r.softirq)
            put(out, "  softirq not raised: jiffies is before next_expiry");
        else if (r.cost.empty_runs > 0 && r.cost.expired == 0)
            put(out, fmt::format("  softirq raised, but nothing was due (next_expiry was stale after a delete): {}",
                                 cost_text(r.cost)));
        else
            put(out, "  softirq raised: " + cost_text(r.cost));
    }
    put_events<ModernWheel>(out, r, v);
    out += ruler();
    for (const auto& l : s.levels) draw_level(out, fmt::format("L{}", l.level), l);
    if (v.deferrable) {
        // 6.1 with NO_HZ_COMMON keeps deferrable timers on their own base,
        // with its own clock; run_timer_softirq() runs it after BASE_STD.
        const ModernSnapshot d = snapshot(q, ModernWheel::base_def);
        put(out, fmt::format("  deferrable base: clk {}, next_expiry {} ({}), {} pending", d.clk, d.next_expiry,
                             next_expiry_text(d), d.pending));
        for (const auto& l : d.levels) draw_level(out, fmt::format("dL{}", l.level), l);
    }
    return out;
}


std::string frame_title(const TickReport& r, const View& v) {
    std::string t;
    if (r.start && r.tick == 0)
        t = fmt::format("=== tick 0: jiffies {}, the start ", r.jiffies);
    else if (r.start)
        t = fmt::format("=== tick {}: jiffies {}, after {} silent ticks ", r.tick, r.jiffies, r.tick);
    else
        t = fmt::format("=== tick {}: jiffies {} ({} after the start) ", r.tick, r.jiffies,
                        format_jiffies_as_time(r.tick, v.hz));
    return t.size() < kStepColumns - 1 ? t + std::string(kStepColumns - 1 - t.size(), '=') + "\n" : t + "\n";
}

namespace {

// ---------------------------------------------------------------------------
// JSON Lines rendering: one object per frame and wheel, with every timer
// listed (no "and N more") and absolute jiffies.


std::string_view outcome_name(ArmOutcome o) {
    switch (o) {
    case ArmOutcome::queued: return "queued";
    case ArmOutcome::same_expiry: return "same_expiry";
    case ArmOutcome::same_bucket: return "same_bucket";
    case ArmOutcome::not_pending: return "not_pending";
    }
    return "?";
}

template <class Q>
std::string json_place(const Placement& p) {
    if constexpr (std::is_same_v<Q, ModernWheel>)
        return fmt::format("\"level\":{},\"slot\":{},\"idx\":{}", p.level, p.slot % modern::kLevelSize, p.slot);
    else
        return fmt::format("\"level\":{},\"slot\":{}", p.level, p.slot);
}

template <class Q>
std::string json_events(const TickReport& r, const View& v) {
    std::vector<std::string> fired, moved, armed, cancelled;
    for (const Fired& f : r.fired)
        fired.push_back(fmt::format("{{\"timer\":{},\"label\":{},\"requested\":{},\"expires\":{},\"late\":{}}}", f.timer,
                                    json_string(v.labels[f.timer]), f.requested, f.expires,
                                    jiffies_diff(r.jiffies, f.requested)));
    for (const Moved& m : r.cascaded)
        moved.push_back(fmt::format("{{\"timer\":{},\"from\":{{{}}},\"to\":{{{}}}}}", m.timer, json_place<Q>(m.from),
                                    json_place<Q>(m.to)));
    for (const Armed& a : r.armed) {
        if (a.cancel) {
            cancelled.push_back(fmt::format("{{\"timer\":{},\"label\":{},\"pending\":{}{}}}", a.timer,
                                            json_string(v.labels[a.timer]), a.at.pending,
                                            a.at.pending ? fmt::format(",{},\"bucket_expiry\":{}", json_place<Q>(a.at),
                                                                       a.at.bucket_expiry)
                                                         : std::string()));
            continue;
        }
        armed.push_back(fmt::format(
            "{{\"timer\":{},\"label\":{},\"requested\":{},\"expires\":{},\"outcome\":\"{}\",{},\"bucket_expiry\":{}}}",
            a.timer, json_string(v.labels[a.timer]), a.requested, a.at.expires, outcome_name(a.outcome),
            json_place<Q>(a.at), a.at.bucket_expiry));
    }
    const SoftirqCost& c = r.cost;
    std::vector<std::string> by_level;
    if constexpr (std::is_same_v<Q, ClassicWheel>)
        for (unsigned a = 2; a <= classic::kArrays; ++a)
            by_level.push_back(fmt::format("\"tv{}\":{}", a, c.cascade_moves_from_level[a]));
    return fmt::format(
        "\"softirq\":{},\"fired\":[{}],\"cascaded\":[{}],\"armed\":[{}],\"cancelled\":[{}],"
        "\"cost\":{{\"buckets_scanned\":{},\"expired\":{},\"cascades\":{},\"cascade_moves\":{},"
        "\"cascade_moves_from\":{{{}}},\"jiffies_walked\":{},\"empty_runs\":{},\"next_expiry_searches\":{}}}",
        r.softirq, fmt::join(fired, ","), fmt::join(moved, ","), fmt::join(armed, ","), fmt::join(cancelled, ","),
        c.buckets_scanned, c.expired,
        c.cascades, c.cascade_moves, fmt::join(by_level, ","), c.jiffies_walked, c.empty_runs, c.next_expiry_searches);
}

std::string json_levels(const std::vector<LevelOccupancy>& levels, std::string_view prefix) {
    std::vector<std::string> out;
    for (const auto& l : levels)
        out.push_back(fmt::format("{{\"name\":\"{}{}\",\"level\":{},\"pointer\":{},\"counts\":[{}]}}", prefix, l.level,
                                  l.level, l.pointer, fmt::join(l.counts, ",")));
    return fmt::format("[{}]", fmt::join(out, ","));
}

std::string json_head(std::string_view design, const TickReport& r, const View& v) {
    return fmt::format("{{\"schema\":\"timersim.step.v1\",\"design\":\"{}\",\"frame\":\"{}\",\"tick\":{},"
                       "\"jiffies\":{},\"hz\":{}",
                       design, r.start ? "start" : "tick", r.tick, r.jiffies, v.hz);
}

} // namespace

std::string render_json(const ClassicWheel& q, const TickReport& r, const View& v) {
    const ClassicSnapshot s = snapshot(q);
    return json_head("classic", r, v) +
           fmt::format(",\"timer_jiffies\":{},\"pending\":{},{},\"levels\":{}}}\n", s.timer_jiffies, s.pending,
                       json_events<ClassicWheel>(r, v), json_levels(s.levels, "tv"));
}


std::string render_json(const ModernWheel& q, const TickReport& r, const View& v) {
    const ModernSnapshot s = snapshot(q);
    std::string deferrable;
    if (v.deferrable) {
        const ModernSnapshot d = snapshot(q, ModernWheel::base_def);
        deferrable = fmt::format(",\"deferrable_base\":{{\"clk\":{},\"next_expiry\":{},\"next_expiry_stale\":{},"
                                 "\"timers_pending\":{},\"pending\":{},\"levels\":{}}}",
                                 d.clk, d.next_expiry, d.next_expiry_stale, d.timers_pending, d.pending,
                                 json_levels(d.levels, "L"));
    }
    return json_head("modern", r, v) +
           fmt::format(",\"clk\":{},\"next_expiry\":{},\"next_expiry_stale\":{},\"timers_pending\":{},"
                       "\"pending\":{},{},\"levels\":{}{}}}\n",
                       s.clk, s.next_expiry, s.next_expiry_stale, s.timers_pending, s.pending,
                       json_events<ModernWheel>(r, v), json_levels(s.levels, "L"), deferrable);
}

// The heap has no buckets: its frame is the events and the pending count
// (level 0, slot = heap position, in the placements), for the playground.
std::string render_json(const HeapQueue& q, const TickReport& r, const View& v) {
    return json_head("heap", r, v) +
           fmt::format(",\"pending\":{},{},\"levels\":[]}}\n", q.pending(), json_events<HeapQueue>(r, v));
}

// ---------------------------------------------------------------------------
// The seeds' designs: rows from their QueueLayout.

namespace {

// "slot[17]", "ring2[5]", "overflow": row `level` of the layout, with the
// slot for a ring.
std::string layout_bucket(const QueueLayout& l, const Placement& p) {
    const std::size_t r = (p.deferrable_base ? l.deferrable_row : 0) + p.level - l.first_level;
    if (p.level < l.first_level || r >= l.rows.size() || (p.deferrable_base && l.deferrable_row == 0))
        return fmt::format("level {}[{}]", p.level, p.slot);
    const LayoutRow& row = l.rows[r];
    return row.counts.empty() ? row.name : fmt::format("{}[{}]", row.name, p.slot - row.first_slot);
}

} // namespace

std::string render_layout_text(std::string_view, const QueueLayout& l, const TickReport& r, const View& v) {
    std::string out;
    put(out, l.summary);
    if (!r.start) {
        if (!r.softirq)
            put(out, "  softirq not raised: nothing pending");
        else
            put(out, fmt::format("  softirq raised: {}{}", cost_text(r.cost),
                                 r.cost.jiffies_walked > 1 ? fmt::format("; walked {} ticks", r.cost.jiffies_walked)
                                                           : std::string()));
    }
    put_events(out, r, v, [&](const Placement& p) { return layout_bucket(l, p); });
    bool ruled = false;
    for (const LayoutRow& row : l.rows) {
        if (row.counts.empty()) {
            put(out, fmt::format("  {}: {}", row.name, plural(row.total, "entry", "entries")));
            continue;
        }
        if (!ruled) out += ruler();
        ruled = true;
        LevelOccupancy occupancy;
        occupancy.pointer = row.pointer;
        occupancy.counts = row.counts;
        draw_level(out, row.name.substr(0, kLabelWidth), occupancy);
    }
    return out;
}

std::string render_layout_json(std::string_view design, const QueueLayout& l, const TickReport& r, const View& v) {
    std::vector<std::string> rows;
    for (const LayoutRow& row : l.rows)
        rows.push_back(fmt::format("{{\"name\":{},\"total\":{},\"pointer\":{},\"counts\":[{}]}}", json_string(row.name),
                                   row.total, row.pointer, fmt::join(row.counts, ",")));
    return json_head(design, r, v) + fmt::format(",\"summary\":{},{},\"rows\":[{}]}}\n", json_string(l.summary),
                                                 json_events<QueueLayout>(r, v), fmt::join(rows, ","));
}

} // namespace timersim
