// timersim step: the wheels tick by tick, drawn in the terminal. Each shown
// tick prints, per wheel, what the tick's softirq did (what fired, what
// cascaded, what it cost), what the workload armed, and then every level as
// a row of buckets with the clock's position under it. The state is read
// through sim/wheel_snapshot.hpp; this file only drives the queues and draws.
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/report/format_time.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/timeout_arg.hpp"
#include "wheel/wheel_snapshot.hpp"
#include "wheel/classic_wheel.hpp"
#include "wheel/modern_wheel.hpp"
#include "workloads/generators/connection_churn.hpp"
#include "workloads/traces/input_file.hpp"
#include "workloads/traces/trace_reader.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

#include <array>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <type_traits>
#include <vector>

namespace timersim::cli {

namespace po = boost::program_options;

namespace {

// Every text line must fit an 80-column terminal (the grid rows are exactly 80).
constexpr std::size_t kColumns = 80;
// Per tick and wheel, at most this many fired / cascaded / armed timers are
// listed one per line; the rest are counted ("... and N more"). JSON lists all.
constexpr std::size_t kListed = 5;
// Grid geometry: "  " + 5-character label + "|" + 64 cells + "|" + 7-digit total.
constexpr std::size_t kLabelWidth = 5;
constexpr std::size_t kCellsColumn = 2 + kLabelWidth + 1;
constexpr std::size_t kCellsPerRow = 64;
constexpr std::size_t kMaxTimers = 1000000;  // keeps per-row totals within 7 digits

// ---------------------------------------------------------------------------
// The workload: the timers of --timeouts, all armed before the first tick,
// connection churn (workloads/connection_churn.hpp), or a trace (--trace).
// Each wheel gets its own churn generator with the same seed: the schedule
// does not depend on which timers fire, so both wheels see the same
// operations. A trace is read once, a jiffy at a time, by a TraceFeed that
// hands the same operations to every wheel.

struct WorkloadSpec {
    std::vector<Jiffies> timeouts;   // --timeouts, in jiffies
    std::vector<std::string> texts;  // --timeouts as typed, for labels
    std::optional<ConnectionChurnConfig> churn;
    std::optional<std::string> trace; // --trace FILE

    std::size_t timers() const { return churn ? churn->connections : timeouts.size(); }
};

// Timer names are cut so that event lines stay short.
std::string short_label(std::string_view s) {
    return s.size() <= 16 ? std::string(s) : fmt::format("{}..", s.substr(0, 14));
}

// One operation of a trace, as every wheel applies it.
struct TraceOp {
    std::uint32_t timer = 0;  // the reader's dense id
    bool cancel = false;      // del_timer(); otherwise mod_timer()
    Jiffies expires = 0;      // arm/modify: the absolute expiry asked for
    TimerFlags flags;         // TIMER_DEFERRABLE, fixed by the timer's first event
    bool pinned = false;      // TIMER_PINNED: 4.x mod_timer_pinned(), no slack
};

// Streams a timersim trace (TraceReader) a jiffy at a time: at(j) returns the
// operations whose time falls in jiffy j (jiffies_at()), in file order.
// Wheels ask in turn for the same jiffy and get the same batch; only one
// event beyond the batch is read ahead. Reader errors (TraceError) pass through.
class TraceFeed {
public:
    explicit TraceFeed(InputFile& in) : reader_(in) {}

    const TraceHeader& header() const noexcept { return reader_.header(); }
    // Names for the display: an event's label= (of the timer's first event), or its key.
    const std::vector<std::string>& labels() const noexcept { return labels_; }
    // Has any batch so far held a deferrable timer? (Then the modern view
    // also draws the deferrable base.)
    const bool& deferrable_seen() const noexcept { return deferrable_seen_; }

    const std::vector<TraceOp>& at(Jiffies j) {
        if (batch_ && batch_jiffy_ == j) return ops_;
        batch_ = true;
        batch_jiffy_ = j;
        ops_.clear();
        for (;;) {
            if (!ahead_ && !read_ahead()) break;
            // Wheels tick every jiffy, so nothing earlier than j is left over.
            if (time_after(ahead_->first, j)) break;
            ops_.push_back(ahead_->second);
            if (ahead_->second.flags.deferrable) deferrable_seen_ = true;
            ahead_.reset();
        }
        return ops_;
    }

private:
    bool read_ahead() {
        TraceEvent e;
        if (!reader_.next(e)) return false;
        TraceOp op;
        op.timer = e.timer;
        op.cancel = e.kind == TraceEventKind::cancel;
        if (!op.cancel) op.expires = expiry_jiffies(reader_.header(), e);
        if (e.timer >= labels_.size()) {
            // Dense ids come in order of first appearance: this is the timer's first event.
            const std::string key = e.key.symbolic ? std::string(e.key.token) : fmt::format("{}", e.key.number);
            labels_.push_back(short_label(e.label.empty() ? std::string_view(key) : e.label));
            first_flags_.push_back(TimerFlags{.deferrable = e.flags.deferrable});
        }
        op.flags = first_flags_[e.timer];
        op.pinned = e.flags.pinned;
        ahead_.emplace(jiffies_at(reader_.header(), e.time_ns), op);
        return true;
    }

    TraceReader reader_;
    std::optional<std::pair<Jiffies, TraceOp>> ahead_;
    bool batch_ = false;
    Jiffies batch_jiffy_ = 0;
    std::vector<TraceOp> ops_;
    std::vector<std::string> labels_;
    std::vector<TimerFlags> first_flags_;
    bool deferrable_seen_ = false;
};

// Short names for timers in the text view: what the user typed for
// --timeouts, the timer kind for churn. Long texts are cut so lines stay short.
std::vector<std::string> timer_labels(const WorkloadSpec& w) {
    std::vector<std::string> labels;
    if (w.churn) {
        // The kinds are the first draws of the seed, so a throwaway generator names them.
        const ConnectionChurn churn(*w.churn, 0);
        for (std::uint32_t c = 0; c < churn.connections(); ++c) labels.emplace_back(to_string(churn.kind(c)));
    } else {
        for (const auto& t : w.texts) labels.push_back(t.size() <= 12 ? t : t.substr(0, 10) + "..");
        // A trace names its timers as it is read: see TraceFeed::labels().
    }
    return labels;
}

// ---------------------------------------------------------------------------
// What happened in one tick of one wheel.

struct Fired {
    std::uint32_t timer;
    Jiffies requested; // what the workload asked for (before classic slack)
    Jiffies expires;   // timer->expires when it ran
};

// An arm, or (trace workloads) a cancel, in the order they happened.
struct Armed {
    std::uint32_t timer;
    Jiffies requested;
    ArmOutcome outcome;
    Placement at; // after the arm (expires includes classic slack); for a cancel, before it
    bool cancel = false; // del_timer(): at.pending tells whether it removed anything
};

struct Moved {
    std::uint32_t timer;
    Placement from;
    Placement to;
};

// Counter deltas over one softirq run.
struct SoftirqCost {
    std::uint64_t buckets_scanned = 0;
    std::uint64_t expired = 0;
    std::uint64_t cascades = 0;
    std::uint64_t cascade_moves = 0;
    std::array<std::uint64_t, kMaxLevels> cascade_moves_from_level{};
    std::uint64_t jiffies_walked = 0;
    std::uint64_t empty_runs = 0;
    std::uint64_t next_expiry_searches = 0;
};

SoftirqCost cost_between(const QueueCounters& before, const QueueCounters& after) {
    SoftirqCost c;
    c.buckets_scanned = after.buckets_scanned - before.buckets_scanned;
    c.expired = after.expired - before.expired;
    c.cascades = after.cascades - before.cascades;
    c.cascade_moves = after.cascade_moves - before.cascade_moves;
    for (std::size_t l = 0; l < kMaxLevels; ++l)
        c.cascade_moves_from_level[l] = after.cascade_moves_from_level[l] - before.cascade_moves_from_level[l];
    c.jiffies_walked = after.jiffies_walked - before.jiffies_walked;
    c.empty_runs = after.empty_runs - before.empty_runs;
    c.next_expiry_searches = after.next_expiry_searches - before.next_expiry_searches;
    return c;
}

struct TickReport {
    bool start = false; // the frame before the first shown tick: state and tick-0 arms only
    Jiffies tick = 0;
    Jiffies jiffies = 0;
    bool softirq = false; // did the tick raise TIMER_SOFTIRQ
    SoftirqCost cost;
    std::vector<Fired> fired;
    std::vector<Moved> cascaded;
    std::vector<Armed> armed;
};

// ---------------------------------------------------------------------------
// One wheel driven tick by tick (a ticking CPU without costs): tick j sets
// jiffies, runs the softirq if the tick raised it, then applies the
// workload's operations of jiffy j.

template <class Q>
class Stepper {
public:
    Stepper(const typename Q::Config& config, const WorkloadSpec& w, TraceFeed* feed)
        : queue_(config), start_(queue_.jiffies()), feed_(feed) {
        const std::size_t n = w.timers();
        queue_.reserve(n);
        ids_.reserve(n);
        requested_.assign(n, 0);
        for (std::size_t t = 0; t < n; ++t) {
            ids_.push_back(queue_.create(TimerFlags{}));
            if (timer_of_.size() <= ids_.back()) timer_of_.resize(ids_.back() + 1);
            timer_of_[ids_.back()] = static_cast<std::uint32_t>(t);
        }
        if (w.churn) churn_.emplace(*w.churn, start_);
        for (std::size_t t = 0; t < w.timeouts.size(); ++t)
            arm(static_cast<std::uint32_t>(t), start_ + w.timeouts[t], &start_arms_);
        if (feed_) apply(feed_->at(start_), &start_arms_);
    }

    const Q& queue() const noexcept { return queue_; }

    // The frame shown before the first shown tick.
    TickReport start_frame() const {
        TickReport r;
        r.start = true;
        r.tick = tick_;
        r.jiffies = queue_.jiffies();
        if (tick_ == 0) r.armed = start_arms_;
        return r;
    }

    // One tick. With `detail` off (the silent --from ticks) nothing is recorded.
    TickReport step(bool detail) {
        TickReport r;
        ++tick_;
        queue_.set_jiffies(start_ + tick_);
        r.tick = tick_;
        r.jiffies = queue_.jiffies();
        r.softirq = queue_.softirq_due();
        if (r.softirq) {
            // Cascades move timers without any call of ours; comparing
            // placements before and after is the only way to name them.
            const bool watch = detail && may_cascade();
            std::vector<Placement> before;
            if (watch) before = placements();
            const QueueCounters counters = queue_.counters();
            queue_.run_softirq([&](const FiredTimer& f) {
                if (!detail) return;
                const std::uint32_t t = timer_of_[f.id];
                r.fired.push_back({t, requested_[t], f.expires});
            });
            r.cost = cost_between(counters, queue_.counters());
            if (watch) record_moves(before, r.cascaded);
        }
        if (churn_) {
            while (const auto conn = churn_->pop_message(queue_.jiffies()))
                arm(*conn, queue_.jiffies() + churn_->draw_timeout(*conn), detail ? &r.armed : nullptr);
        }
        if (feed_) apply(feed_->at(queue_.jiffies()), detail ? &r.armed : nullptr);
        return r;
    }

private:
    void arm(std::uint32_t t, Jiffies expires, std::vector<Armed>* log, ArmCall call = ArmCall::mod_timer) {
        requested_[t] = expires;
        const ArmOutcome outcome = queue_.arm(ids_[t], expires, call);
        if (log) log->push_back({t, expires, outcome, queue_.placement(ids_[t])});
    }

    // A trace's operations of this jiffy, in file order. A timer is created
    // (timer_setup()) at its first event, with that event's flags.
    void apply(const std::vector<TraceOp>& ops, std::vector<Armed>* log) {
        for (const TraceOp& op : ops) {
            while (ids_.size() <= op.timer) {
                ids_.push_back(queue_.create(op.flags));
                if (timer_of_.size() <= ids_.back()) timer_of_.resize(ids_.back() + 1);
                timer_of_[ids_.back()] = static_cast<std::uint32_t>(ids_.size() - 1);
                requested_.push_back(0);
            }
            if (op.cancel) {
                const Placement before = queue_.placement(ids_[op.timer]);
                queue_.cancel(ids_[op.timer]);
                if (log) log->push_back({op.timer, 0, ArmOutcome::not_pending, before, true});
            } else {
                arm(op.timer, op.expires, log, op.pinned ? ArmCall::mod_timer_pinned : ArmCall::mod_timer);
            }
        }
    }

    // Does this softirq run a classic loop step whose tv1 index is 0, i.e.
    // cascade? The modern wheel never moves a queued timer.
    bool may_cascade() const {
        if constexpr (std::is_same_v<Q, ClassicWheel>) {
            const Jiffies mask = queue_.geometry().tvr_size() - 1;
            const Jiffies first = queue_.timer_jiffies();
            if (time_after(first, queue_.jiffies())) return false;
            return time_before_eq((first + mask) & ~mask, queue_.jiffies());
        } else {
            return false;
        }
    }

    std::vector<Placement> placements() const {
        std::vector<Placement> p;
        p.reserve(ids_.size());
        for (TimerId id : ids_) p.push_back(queue_.placement(id));
        return p;
    }

    void record_moves(const std::vector<Placement>& before, std::vector<Moved>& moves) const {
        for (std::size_t t = 0; t < ids_.size(); ++t) {
            if (!before[t].pending) continue;
            const Placement now = queue_.placement(ids_[t]);
            if (now.pending && (now.level != before[t].level || now.slot != before[t].slot))
                moves.push_back({static_cast<std::uint32_t>(t), before[t], now});
        }
    }

    Q queue_;
    Jiffies start_;
    Jiffies tick_ = 0;
    std::vector<TimerId> ids_;
    std::vector<std::uint32_t> timer_of_; // TimerId -> workload timer number
    std::vector<Jiffies> requested_;
    std::optional<ConnectionChurn> churn_;
    TraceFeed* feed_;
    std::vector<Armed> start_arms_;
};

// ---------------------------------------------------------------------------
// Text rendering.

struct View {
    unsigned hz;
    Jiffies start; // jiffies at tick 0
    const std::vector<std::string>& labels;
    // Draw the modern deferrable base (BASE_DEF) too: set once a trace armed a
    // deferrable timer; until then that base is empty and not drawn.
    const bool& deferrable;
};

// Appends `text` as one or more lines of at most kColumns, breaking at spaces
// and indenting continuation lines, so long numbers never push a line past
// the terminal edge.
void put(std::string& out, std::string_view text, std::size_t indent = 6) {
    std::size_t first = 0;
    while (text.size() > kColumns - first) {
        const std::size_t room = kColumns - first;
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

template <class Q>
void put_events(std::string& out, const TickReport& r, const View& v) {
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
        put(out, fmt::format("  cascaded {}: {} -> {}", timer_name(m.timer, v), bucket_name<Q>(m.from),
                             bucket_name<Q>(m.to)));
    }
    more(r.cascaded.size(), "cascaded");
    bool cancels = false;
    for (std::size_t i = 0; i < r.armed.size() && i < kListed; ++i) {
        const Armed& a = r.armed[i];
        if (a.cancel) {
            cancels = true;
            put(out, a.at.pending ? fmt::format("  cancelled {}: removed from {} (due at {})",
                                                timer_name(a.timer, v), bucket_name<Q>(a.at),
                                                tick_of(a.at.bucket_expiry, v))
                                  : fmt::format("  cancelled {}: not pending, nothing to do", timer_name(a.timer, v)));
            continue;
        }
        std::string s = fmt::format("  armed {} for {}: ", timer_name(a.timer, v), tick_of(a.requested, v));
        switch (a.outcome) {
        case ArmOutcome::queued:
            s += fmt::format("{}, due at {}", bucket_name<Q>(a.at), tick_of(a.at.bucket_expiry, v));
            // Classic mod_timer() rounds expires up by apply_slack().
            if (a.at.expires != a.requested) s += fmt::format(" (slack {:+})", jiffies_diff(a.at.expires, a.requested));
            break;
        case ArmOutcome::same_bucket:
            s += fmt::format("same bucket {}, not moved", bucket_name<Q>(a.at));
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
    return t.size() < kColumns - 1 ? t + std::string(kColumns - 1 - t.size(), '=') + "\n" : t + "\n";
}

// ---------------------------------------------------------------------------
// JSON Lines rendering: one object per frame and wheel, with every timer
// listed (no "and N more") and absolute jiffies.

std::string json_string(std::string_view s) {
    std::string out = "\"";
    for (const char c : s) {
        if (c == '"' || c == '\\')
            out += fmt::format("\\{}", c);
        else if (static_cast<unsigned char>(c) < 0x20)
            out += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        else
            out += c;
    }
    return out + "\"";
}

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

// ---------------------------------------------------------------------------

std::string describe_workload(const WorkloadSpec& w) {
    if (w.trace) return fmt::format("the trace {}, events applied after their jiffy's tick", *w.trace);
    if (w.churn)
        return fmt::format("connection churn, {} connections, a message every {} ms on average, seed {}",
                           w.churn->connections, w.churn->message_interval_ms, w.churn->seed);
    return fmt::format("{} armed with mod_timer() at tick 0 (--timeouts {})",
                       plural(w.timeouts.size(), "timer", "timers"), fmt::join(w.texts, ","));
}

WorkloadSpec parse_workload(const po::variables_map& vm, unsigned hz) {
    WorkloadSpec w;
    if (vm.count("trace")) {
        if (vm.count("timeouts")) throw UsageError("--trace cannot be combined with --timeouts");
        for (const char* churn_option : {"connections", "message-interval", "seed"})
            if (!vm[churn_option].defaulted())
                throw UsageError(fmt::format("--trace cannot be combined with --{} (a connection-churn option)",
                                             churn_option));
        w.trace = vm["trace"].as<std::string>();
        return w;
    }
    if (vm.count("timeouts")) {
        for (const char* churn_option : {"connections", "message-interval", "seed"})
            if (!vm[churn_option].defaulted())
                throw UsageError(fmt::format("--timeouts cannot be combined with --{} (a connection-churn option)",
                                             churn_option));
        std::string_view rest = vm["timeouts"].as<std::string>();
        while (true) {
            const auto comma = rest.find(',');
            const std::string_view item = rest.substr(0, comma);
            try {
                w.timeouts.push_back(parse_timeout_jiffies(item, hz));
            } catch (const std::invalid_argument& e) {
                throw UsageError(fmt::format("--timeouts: {}", e.what()));
            }
            w.texts.emplace_back(item);
            if (comma == std::string_view::npos) break;
            rest.remove_prefix(comma + 1);
        }
        if (w.timeouts.size() > kMaxTimers)
            throw UsageError(fmt::format("--timeouts: at most {} timeouts, got {}", kMaxTimers, w.timeouts.size()));
        return w;
    }
    ConnectionChurnConfig c;
    c.hz = hz;
    c.connections = vm["connections"].as<std::uint32_t>();
    c.message_interval_ms = vm["message-interval"].as<double>();
    c.seed = vm["seed"].as<std::uint64_t>();
    if (c.connections < 1 || c.connections > kMaxTimers)
        throw UsageError(fmt::format("--connections: must be 1..{}, got {}", kMaxTimers, c.connections));
    if (!(c.message_interval_ms >= 1) || c.message_interval_ms > 1e9)
        throw UsageError(fmt::format("--message-interval: must be 1..1e9 ms, got {}", c.message_interval_ms));
    w.churn = c;
    return w;
}

struct Run {
    std::int64_t from;
    std::int64_t ticks;
    bool json;
};

template <class... Steppers>
void run_view(const Run& run, const View& view, const std::string& intro, Steppers&... steppers) {
    if (run.from > 0) {
        ProgressBar bar("step");
        for (std::int64_t t = 0; t < run.from; ++t) {
            (steppers.step(false), ...);
            if ((t & 1023) == 0) bar.update(static_cast<double>(t) / static_cast<double>(run.from));
        }
    }
    if (!run.json) fmt::print("{}", intro);
    // One frame: the same tick of every wheel, in the order given.
    const auto show = [&](const std::vector<TickReport>& reports) {
        if (!run.json) fmt::print("\n{}", frame_title(reports.front(), view));
        std::size_t i = 0;
        const auto one = [&](const auto& stepper) {
            const TickReport& r = reports[i];
            if (run.json) {
                fmt::print("{}", render_json(stepper.queue(), r, view));
            } else {
                if (i > 0) fmt::print("\n");
                fmt::print("{}", render_text(stepper.queue(), r, view));
            }
            ++i;
        };
        (one(steppers), ...);
    };
    // Braced lists evaluate left to right, so the wheels always step in order.
    show(std::vector<TickReport>{steppers.start_frame()...});
    for (std::int64_t t = 0; t < run.ticks; ++t) show(std::vector<TickReport>{steppers.step(true)...});
}

void step_workload(const Run& run, const WorkloadSpec& workload, TraceFeed* feed, unsigned hz,
                   std::optional<std::int64_t> slack, const classic::Geometry& geometry, const std::string& design);

} // namespace

int run_step(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("ticks", po::value<std::int64_t>()->required(), "ticks to show (1..100000)")
        ("from", po::value<std::int64_t>()->default_value(0), "ticks to run silently first (0..1e9), counted from the start")
        ("timeouts", po::value<std::string>(),
         "arm one timer per listed timeout at tick 0 instead of running connection churn: "
         "comma-separated, jiffies (36) or time (144ms, 60s)")
        ("trace", po::value<std::string>(),
         "replay a timersim trace (format v1, docs/trace-format.md) instead of connection churn; "
         "see the notes above")
        ("connections", po::value<std::uint32_t>()->default_value(200), "connection churn: connections, one timer each (1..1000000)")
        ("message-interval", po::value<double>()->default_value(1000), "connection churn: mean ms between two messages of one connection")
        ("seed", po::value<std::uint64_t>()->default_value(1), "connection churn: workload seed")
        ("design", po::value<std::string>()->default_value("both"), "classic, modern or both (the heap has no buckets to draw)")
        ("format", po::value<std::string>()->default_value("text"), "text (80 columns) or json (JSON Lines: one object per tick and wheel)");
    add_hz_option(options);
    add_classic_options(options);
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim step (--timeouts LIST | --trace FILE | [churn options]) [--from J] --ticks N [options]",
            .description =
                "Show the wheels tick by tick: per tick and wheel, whether the tick raised\n"
                "TIMER_SOFTIRQ, what fired (and how late), what cascaded, what the softirq\n"
                "cost, what was armed, and every level drawn as a row of buckets (1-9 timers,\n"
                "+ for 10 or more, . for none) with ^ under the bucket the clock points at.\n"
                "Tick t sets jiffies to start + t; the start is INITIAL_JIFFIES for the HZ.\n"
                "Without --timeouts or --trace the workload is connection churn, as in\n"
                "timersim compare.\n"
                "\n"
                "--trace FILE: HZ and start_jiffies (tick 0) come from the trace's header (--hz,\n"
                "if given, must agree). Each event is applied at the jiffy its time falls in,\n"
                "after that jiffy's tick, in file order, to every wheel shown: arm and modify\n"
                "call mod_timer() (flags=pinned: mod_timer_pinned(), no classic slack), cancel\n"
                "calls del_timer(). A timer's first event fixes its flags (flags=deferrable: a\n"
                "deferrable timer; the modern view then also draws the deferrable base, rows\n"
                "dL0..) and its name (its label=, else its key). cpu= is ignored: step\n"
                "simulates one CPU. The trace is read as it goes, only as far as the last tick\n"
                "shown; bad input stops the run with FILE:LINE: what (field) and exit status 2.",
            .examples = "timersim step --timeouts 36,300,20000 --ticks 3 --hz 1000\n"
                        "timersim step --timeouts 20000 --hz 1000 --from 19966 --ticks 2 --design classic\n"
                        "timersim step --ticks 5 --connections 200 --design modern\n"
                        "timersim step --timeouts 60s --ticks 1 --format json\n"
                        "timersim step --trace run.trace --from 990 --ticks 20 --design classic",
        });
    if (!vm) return kExitOk;

    unsigned hz = hz_option(*vm);
    const std::optional<std::int64_t> slack = slack_option(*vm);
    const classic::Geometry geometry = geometry_option(*vm);
    if ((*vm)["design"].as<std::string>() == "heap")
        throw UsageError("--design: the heap has no buckets to draw; choose classic, modern or both");
    const std::string design = choice_option(*vm, "design", {"classic", "modern", "both"});
    const bool json = choice_option(*vm, "format", {"text", "json"}) == "json";
    Run run{(*vm)["from"].as<std::int64_t>(), (*vm)["ticks"].as<std::int64_t>(), json};
    if (run.ticks < 1 || run.ticks > 100000)
        throw UsageError(fmt::format("--ticks: must be 1..100000, got {}", run.ticks));
    if (run.from < 0 || run.from > 1000000000)
        throw UsageError(fmt::format("--from: must be 0..1000000000, got {}", run.from));
    const WorkloadSpec workload = parse_workload(*vm, hz);
    try {
        std::optional<InputFile> file; // FILE or "-", compressed or not; InputError if it cannot be read
        std::optional<TraceFeed> feed;
        if (workload.trace) {
            feed.emplace(file.emplace(*workload.trace));
            if (!(*vm)["hz"].defaulted() && hz != feed->header().hz)
                throw UsageError(fmt::format("--hz {} differs from the trace's hz={}", hz, feed->header().hz));
            hz = feed->header().hz;
        }
        WorkloadSpec shown = workload;
        if (file) shown.trace = file->name(); // "<stdin>" for "-"
        step_workload(run, shown, feed ? &*feed : nullptr, hz, slack, geometry, design);
    } catch (const TraceError& e) {
        // Bad input: exactly one line, no hint (the file is at fault, not the command line).
        std::fflush(stdout);
        fmt::print(stderr, "timersim: {}\n", e.what());
        return kExitUsage;
    }
    return kExitOk;
}

namespace {

void step_workload(const Run& run, const WorkloadSpec& workload, TraceFeed* feed, unsigned hz,
                   std::optional<std::int64_t> slack, const classic::Geometry& geometry, const std::string& design) {
    const Jiffies start = feed ? feed->header().start_jiffies : initial_jiffies(hz);
    const std::vector<std::string> churn_labels = feed ? std::vector<std::string>{} : timer_labels(workload);
    static const bool no_deferrable = false;
    const View view{hz, start, feed ? feed->labels() : churn_labels, feed ? feed->deferrable_seen() : no_deferrable};
    std::string intro;
    const std::string shown = run.ticks == 1 ? fmt::format("tick {}", run.from + 1)
                                             : fmt::format("ticks {}..{}", run.from + 1, run.from + run.ticks);
    put(intro, fmt::format("timersim step: {}; HZ={} (a tick is {}), tick 0 is jiffies {}; showing {}.",
                           describe_workload(workload), hz, format_jiffies_as_time(1, hz), start, shown),
        0);
    put(intro,
        "Each cell is one bucket: 1-9 timers, + for 10 or more, . for none. ^ marks the bucket the clock "
        "points at on that level: (clk >> 3L) & 63 for modern level L, the matching index bits of "
        "timer_jiffies for classic tv1..tv5. A tick shows the state after its softirq and its arms.",
        0);

    const ClassicWheel::Config classic_config{.hz = hz, .start_jiffies = start, .geometry = geometry, .slack = slack};
    const ModernWheel::Config modern_config{.hz = hz, .start_jiffies = start};
    if (design == "classic") {
        Stepper<ClassicWheel> c(classic_config, workload, feed);
        run_view(run, view, intro, c);
    } else if (design == "modern") {
        Stepper<ModernWheel> m(modern_config, workload, feed);
        run_view(run, view, intro, m);
    } else {
        Stepper<ClassicWheel> c(classic_config, workload, feed);
        Stepper<ModernWheel> m(modern_config, workload, feed);
        run_view(run, view, intro, c, m);
    }
}

} // namespace

} // namespace timersim::cli
