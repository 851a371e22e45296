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
void put_events(std::string& out, const TickReport& r, const View& v, const Namer& bucket_name,
                std::string_view who = {});

template <class Q>
void put_events(std::string& out, const TickReport& r, const View& v) {
    put_events(out, r, v, [](const Placement& p) { return bucket_name<Q>(p); });
}

// The same with the buckets named by `bucket_name` (the seeds' designs name
// them from their layout), each line after `who` (several CPUs: "CPU 1 ").
template <class Namer>
void put_events(std::string& out, const TickReport& r, const View& v, const Namer& bucket_name,
                std::string_view who) {
    const auto more = [&](std::size_t total, std::string_view what) {
        if (total > kListed) put(out, fmt::format("  {}... and {} more {}", who, total - kListed, what));
    };
    for (std::size_t i = 0; i < r.fired.size() && i < kListed; ++i) {
        const Fired& f = r.fired[i];
        // 6.9+: a migrator ran an idle CPU's global base (timer_expire_remote()).
        const std::string remote = f.remote_for ? fmt::format(", remote for CPU {}", *f.remote_for) : std::string();
        std::string s = fmt::format("  {}fired {}{}: asked for {}, {}", who, timer_name(f.timer, v), remote,
                                    tick_of(f.requested, v), late_text(jiffies_diff(r.jiffies, f.requested), v.hz));
        put(out, s);
    }
    more(r.fired.size(), "fired");
    for (std::size_t i = 0; i < r.cascaded.size() && i < kListed; ++i) {
        const Moved& m = r.cascaded[i];
        put(out, fmt::format("  {}cascaded {}: {} -> {}", who, timer_name(m.timer, v), bucket_name(m.from),
                             bucket_name(m.to)));
    }
    more(r.cascaded.size(), "cascaded");
    bool cancels = false;
    for (std::size_t i = 0; i < r.armed.size() && i < kListed; ++i) {
        const Armed& a = r.armed[i];
        if (a.cancel) {
            cancels = true;
            put(out, a.at.pending ? fmt::format("  {}cancelled {}: removed from {} (due at {})", who,
                                                timer_name(a.timer, v), bucket_name(a.at),
                                                tick_of(a.at.bucket_expiry, v))
                                  : fmt::format("  {}cancelled {}: not pending, nothing to do", who,
                                                timer_name(a.timer, v)));
            continue;
        }
        std::string s = fmt::format("  {}armed {} for {}: ", who, timer_name(a.timer, v), tick_of(a.requested, v));
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

void put_modern_events(std::string& out, const TickReport& r, const View& v, std::string_view who) {
    put_events(out, r, v, [](const Placement& p) { return bucket_name<ModernWheel>(p); }, who);
}

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

// The frames' JSON Lines: one object per line, no spaces.
const JsonLayout kFrameLayout{.compact = true};

// Where a timer sits: {"level", "slot"} (and the modern wheel's "idx"),
// added to `object`.
template <class Q>
void add_place(ordered_json& object, const Placement& p) {
    object["level"] = p.level;
    if constexpr (std::is_same_v<Q, ModernWheel>) {
        object["slot"] = p.slot % modern::kLevelSize;
        object["idx"] = p.slot;
    } else {
        object["slot"] = p.slot;
    }
}

template <class Q>
ordered_json place(const Placement& p) {
    ordered_json object = ordered_json::object();
    add_place<Q>(object, p);
    return object;
}

ordered_json fired_timer(const TickReport& r, const View& v, const Fired& f) {
    ordered_json o = ordered_json::object();
    o["timer"] = f.timer;
    o["label"] = v.labels[f.timer];
    o["requested"] = f.requested;
    o["expires"] = f.expires;
    o["late"] = jiffies_diff(r.jiffies, f.requested);
    if (v.cpus > 1) o["remote_for"] = f.remote_for ? ordered_json(*f.remote_for) : ordered_json(nullptr);
    return o;
}

template <class Q>
ordered_json cancelled_timer(const View& v, const Armed& a) {
    ordered_json o = ordered_json::object();
    o["timer"] = a.timer;
    o["label"] = v.labels[a.timer];
    o["pending"] = a.at.pending;
    if (a.at.pending) {
        add_place<Q>(o, a.at);
        o["bucket_expiry"] = a.at.bucket_expiry;
    }
    return o;
}

template <class Q>
ordered_json armed_timer(const View& v, const Armed& a) {
    ordered_json o = ordered_json::object();
    o["timer"] = a.timer;
    o["label"] = v.labels[a.timer];
    o["requested"] = a.requested;
    o["expires"] = a.at.expires;
    o["outcome"] = outcome_name(a.outcome);
    add_place<Q>(o, a.at);
    o["bucket_expiry"] = a.at.bucket_expiry;
    return o;
}

template <class Q>
ordered_json softirq_cost(const SoftirqCost& c) {
    ordered_json by_level = ordered_json::object();
    if constexpr (std::is_same_v<Q, ClassicWheel>)
        for (unsigned a = 2; a <= classic::kArrays; ++a) by_level[fmt::format("tv{}", a)] = c.cascade_moves_from_level[a];
    ordered_json o = ordered_json::object();
    o["buckets_scanned"] = c.buckets_scanned;
    o["expired"] = c.expired;
    o["cascades"] = c.cascades;
    o["cascade_moves"] = c.cascade_moves;
    o["cascade_moves_from"] = std::move(by_level);
    o["jiffies_walked"] = c.jiffies_walked;
    o["empty_runs"] = c.empty_runs;
    o["next_expiry_searches"] = c.next_expiry_searches;
    return o;
}

// The tick's events: "softirq", "fired", "cascaded", "armed", "cancelled"
// and "cost", added to `frame`.
template <class Q>
void add_events(ordered_json& frame, const TickReport& r, const View& v) {
    ordered_json fired = ordered_json::array(), moved = ordered_json::array(), armed = ordered_json::array(),
                 cancelled = ordered_json::array();
    for (const Fired& f : r.fired) fired.push_back(fired_timer(r, v, f));
    for (const Moved& m : r.cascaded) {
        ordered_json o = ordered_json::object();
        o["timer"] = m.timer;
        o["from"] = place<Q>(m.from);
        o["to"] = place<Q>(m.to);
        moved.push_back(std::move(o));
    }
    for (const Armed& a : r.armed) {
        if (a.cancel)
            cancelled.push_back(cancelled_timer<Q>(v, a));
        else
            armed.push_back(armed_timer<Q>(v, a));
    }
    frame["softirq"] = r.softirq;
    frame["fired"] = std::move(fired);
    frame["cascaded"] = std::move(moved);
    frame["armed"] = std::move(armed);
    frame["cancelled"] = std::move(cancelled);
    frame["cost"] = softirq_cost<Q>(r.cost);
}

ordered_json levels_json(const std::vector<LevelOccupancy>& levels, std::string_view prefix) {
    ordered_json out = ordered_json::array();
    for (const auto& l : levels) {
        ordered_json o = ordered_json::object();
        o["name"] = fmt::format("{}{}", prefix, l.level);
        o["level"] = l.level;
        o["pointer"] = l.pointer;
        o["counts"] = l.counts;
        out.push_back(std::move(o));
    }
    return out;
}

// The members every frame starts with.
ordered_json frame_head(std::string_view design, const TickReport& r, const View& v) {
    ordered_json o = ordered_json::object();
    o["schema"] = "timersim.step.v1";
    o["design"] = std::string(design);
    o["frame"] = r.start ? "start" : "tick";
    o["tick"] = r.tick;
    o["jiffies"] = r.jiffies;
    o["hz"] = v.hz;
    return o;
}

} // namespace

std::string frame_line(const ordered_json& frame) { return write_json(frame, kFrameLayout) + "\n"; }

std::string render_json(const ClassicWheel& q, const TickReport& r, const View& v) {
    const ClassicSnapshot s = snapshot(q);
    ordered_json frame = frame_head("classic", r, v);
    frame["timer_jiffies"] = s.timer_jiffies;
    frame["pending"] = s.pending;
    add_events<ClassicWheel>(frame, r, v);
    frame["levels"] = levels_json(s.levels, "tv");
    return frame_line(frame);
}

namespace {

// A modern wheel's base: its clock, next expiry and pending counts, added to `object`.
void add_modern_base(ordered_json& object, const ModernSnapshot& s) {
    object["clk"] = s.clk;
    object["next_expiry"] = s.next_expiry;
    object["next_expiry_stale"] = s.next_expiry_stale;
    object["timers_pending"] = s.timers_pending;
    object["pending"] = s.pending;
}

} // namespace

std::string render_json(const ModernWheel& q, const TickReport& r, const View& v) {
    ordered_json frame = frame_head("modern", r, v);
    const ModernSnapshot s = snapshot(q);
    add_modern_base(frame, s);
    add_events<ModernWheel>(frame, r, v);
    frame["levels"] = levels_json(s.levels, "L");
    if (v.deferrable) {
        const ModernSnapshot d = snapshot(q, ModernWheel::base_def);
        ordered_json base = ordered_json::object();
        add_modern_base(base, d);
        base["levels"] = levels_json(d.levels, "L");
        frame["deferrable_base"] = std::move(base);
    }
    return frame_line(frame);
}

// The heap has no buckets: its frame is the events and the pending count
// (level 0, slot = heap position, in the placements), for the playground.
std::string render_json(const HeapQueue& q, const TickReport& r, const View& v) {
    ordered_json frame = frame_head("heap", r, v);
    frame["pending"] = q.pending();
    add_events<HeapQueue>(frame, r, v);
    frame["levels"] = ordered_json::array();
    return frame_line(frame);
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

ordered_json layout_frame(std::string_view design, const QueueLayout& l, const TickReport& r, const View& v) {
    ordered_json rows = ordered_json::array();
    for (const LayoutRow& row : l.rows) {
        ordered_json o = ordered_json::object();
        o["name"] = row.name;
        o["total"] = row.total;
        o["pointer"] = row.pointer;
        o["counts"] = row.counts;
        rows.push_back(std::move(o));
    }
    ordered_json frame = frame_head(design, r, v);
    frame["summary"] = l.summary;
    add_events<QueueLayout>(frame, r, v);
    frame["rows"] = std::move(rows);
    return frame;
}

std::string render_layout_json(std::string_view design, const QueueLayout& l, const TickReport& r, const View& v) {
    return frame_line(layout_frame(design, l, r, v));
}

} // namespace timersim
