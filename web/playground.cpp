// The browser playground's C++ side: timersim's own queues, driven tick by
// tick by the same Stepper as `timersim step` (sim/machine/stepper.hpp), each
// frame rendered by the same JSON writer (sim/report/step_report.hpp,
// schema timersim.step.v1; wheel:SPEC, which step does not draw, in the
// seeds' row layout), the explain text from the same functions as
// `timersim explain` (sim/report/explain_report.hpp, and for the seeds'
// queues sim/report/seed_views.cpp, compiled here as it is), and the trace readers
// of workloads/traces/. Compiled to WebAssembly by scripts/build-web only;
// the native build never sees this file.
//
//   const s = Module.openSession("modern", '{"hz":250}');   // or "cog", "wheel:rfc-2015", ...
//   const t = s.addTimer("300ms", false);     // timer_setup(); true: TIMER_DEFERRABLE
//   s.arm(t, s.parseTimeout("300ms"));        // mod_timer(jiffies + 75): JSON frame
//   s.tick();                                 // one tick: JSON frame of what it did
//   s.explain(t);                             // the `timersim explain` text
//   s.delete();
//
// Every call that can fail on user input returns {"error": "..."} (JSON) or
// throws nothing across the boundary: JS sees the message, never an abort.
#include "sim/cli/timeout_arg.hpp"
#include "sim/machine/design.hpp"
#include "sim/machine/design_queues.hpp"
#include "sim/machine/stepper.hpp"
#include "sim/report/explain_report.hpp"
#include "sim/report/json.hpp"
#include "sim/report/seed_views.hpp"
#include "sim/report/step_report.hpp"
#include "wheel/configurable/cascading_wheel.hpp"
#include "wheel/configurable/in_place_wheel.hpp"
#include "wheel/configurable/wheel_spec.hpp"
#include "wheel/core/clock.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/views/wheel_snapshot.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/kernel/hz_inference.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"

#include <emscripten/bind.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace timersim::web {

namespace {

// What JS receives: JSON text as the step frames have it, on one line.
std::string to_js(const ordered_json& value) { return write_json(value, JsonLayout{.compact = true}); }

std::string error_json(const std::string& what) { return to_js({{"error", what}}); }

// What a session runs, from the options JSON: {"hz":250, "slack":"default"|"off"|N,
// "base_small":false} plus at most one of "timeouts":["36","300ms"],
// "churn":{"connections":200,"message_interval_ms":1000,"seed":1} or
// "trace":"/path/in/the/wasm/fs" (a timersim trace v1, whose header fixes HZ).
struct Options {
    std::optional<WheelSpec> wheel; // the configurable wheel's spec (Design::wheel)
    std::string wheel_name;         // as the CLI prints it: "wheel:rfc-2015", ...
    unsigned hz = 250;
    std::optional<std::int64_t> slack = -1;
    classic::Geometry geometry = classic::Geometry::normal();
    StepWorkload workload;
};

Options parse_options(const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    Options o;
    o.hz = j.value("hz", 250u);
    if (!valid_hz(o.hz)) throw std::invalid_argument(fmt::format("hz must be 1..{}", kMaxHz));
    if (j.contains("slack")) {
        const auto& s = j["slack"];
        if (s.is_number_integer()) o.slack = s.get<std::int64_t>();
        else if (s == "off") o.slack = std::nullopt;
        else if (s != "default") throw std::invalid_argument("slack: default, off or a number of jiffies");
    }
    if (j.value("base_small", false)) o.geometry = classic::Geometry::base_small();
    if (j.contains("timeouts")) {
        for (const auto& t : j["timeouts"]) {
            const std::string text = t.get<std::string>();
            o.workload.timeouts.push_back(parse_timeout_jiffies(text, o.hz));
            o.workload.texts.push_back(text);
        }
    } else if (j.contains("churn")) {
        const auto& c = j["churn"];
        ConnectionChurnConfig cc;
        cc.hz = o.hz;
        cc.connections = c.value("connections", 200u);
        cc.message_interval_ms = c.value("message_interval_ms", 1000.0);
        cc.seed = c.value("seed", std::uint64_t{1});
        if (cc.connections < 1 || cc.connections > kMaxStepTimers) throw std::invalid_argument("churn: connections");
        o.workload.churn = cc;
    } else if (j.contains("trace")) {
        o.workload.trace = j["trace"].get<std::string>();
    }
    return o;
}

// One design's queue behind one interface, so JS holds any design alike.
class Session {
public:
    virtual ~Session() = default;
    virtual std::string design() const = 0;
    virtual std::string start_frame() = 0;
    virtual std::string tick() = 0;
    virtual void run_quiet(double ticks) = 0;
    // deferrable: TIMER_DEFERRABLE (the modern wheels queue it on their second base)
    virtual std::uint32_t add_timer(const std::string& label, bool deferrable) = 0;
    virtual std::string arm(std::uint32_t timer, double timeout_jiffies) = 0;
    virtual std::string cancel(std::uint32_t timer) = 0;
    virtual std::string explain(std::uint32_t timer) const = 0;
    virtual std::string explain_command(std::uint32_t timer) const = 0;
    virtual std::string placement(std::uint32_t timer) const = 0;
    virtual std::string placements() const = 0;
    virtual double jiffies() const = 0;
    virtual double start_jiffies() const = 0;
    virtual unsigned hz() const = 0;
    virtual std::uint32_t timers() const = 0;
    virtual std::string labels_json() const = 0;
};

template <class Q>
constexpr bool is_configurable = std::is_same_v<Q, CascadingWheel> || std::is_same_v<Q, InPlaceWheel>;

// What the session's queue is built from (design_queues.hpp), at the HZ the
// session runs at (a trace's own).
QueueParams queue_params(const Options& o, unsigned hz, Jiffies start) {
    return {.hz = hz,
            .start_jiffies = start,
            .classic_geometry = o.geometry,
            .classic_slack = o.slack,
            .wheel = o.wheel ? std::optional(o.wheel->geometry(hz)) : std::nullopt};
}

// The wheel's own clock a mod_timer() at this instant computes the placement
// from: modern base->clk after forward_timer_base() (read back after the
// arm), classic timer_jiffies, cog's clk; the heap and the other seeds'
// queues place from jiffies.
template <class Q>
Jiffies own_clock(const Q& q) {
    if constexpr (std::is_same_v<Q, ModernWheel>) return snapshot(q).clk;
    else if constexpr (std::is_same_v<Q, InPlaceWheel>) return q.clk();
    else if constexpr (std::is_same_v<Q, ClassicWheel> || std::is_same_v<Q, CascadingWheel>) return q.timer_jiffies();
    else if constexpr (std::is_same_v<Q, CogWheel>) return q.clk(); // the next tick it processes
    else return q.jiffies();
}

// A placement as the frames draw it: modern slots inside their level (idx
// apart); the configurable wheel's as (row, slot in the row), rows counted
// from 0 with the deferrable base's levels after the standard ones; every
// other design's as its queue gives it (QueueLayout rows, classic tv1..5).
template <class Q>
Placement drawn(const Q& q, Placement p) {
    if constexpr (std::is_same_v<Q, CascadingWheel>) {
        if (p.pending) --p.level; // 1-based, as ClassicWheel's tv arrays
    } else if constexpr (std::is_same_v<Q, InPlaceWheel>) {
        if (p.pending) {
            p.slot -= q.geometry().offset(p.level);
            if (p.deferrable_base) p.level += q.geometry().depth;
        }
    } else if constexpr (std::is_same_v<Q, ModernWheel>) {
        p.slot %= modern::kLevelSize;
    }
    return p;
}

// The configurable wheel drawn as the seeds' queues are (QueueLayout): one
// row per level, each bucket's count taken from the placements of every
// timer, the hand at the level's bits of the wheel's clock.
template <class Q>
QueueLayout wheel_layout(const Stepper<Q>& st, bool deferrable) {
    const Q& q = st.queue();
    const WheelGeometry& g = q.geometry();
    QueueLayout l;
    const unsigned bases = std::is_same_v<Q, InPlaceWheel> && deferrable ? 2 : 1;
    for (unsigned b = 0; b < bases; ++b) {
        Jiffies clk = own_clock(q);
        if constexpr (std::is_same_v<Q, InPlaceWheel>) clk = q.clk(b);
        for (unsigned level = 0; level < g.depth; ++level) {
            LayoutRow row;
            row.name = fmt::format("{}L{}", b ? "d" : "", level);
            row.counts.assign(g.slots(level), 0);
            row.pointer = static_cast<unsigned>((clk >> g.shift[level]) & (g.slots(level) - 1));
            l.rows.push_back(std::move(row));
        }
    }
    for (std::uint32_t t = 0; t < st.timers(); ++t) {
        const Placement p = drawn(q, st.placement(t));
        if (!p.pending || p.level >= l.rows.size()) continue;
        ++l.rows[p.level].counts.at(p.slot);
        ++l.rows[p.level].total;
    }
    if constexpr (std::is_same_v<Q, InPlaceWheel>)
        l.summary = fmt::format("{} (in place, {} levels): clk {}, {} pending{}", to_string(g), g.depth, q.clk(),
                                q.pending(), deferrable ? fmt::format(", deferrable base clk {}", q.clk(1)) : "");
    else
        l.summary = fmt::format("{} (cascading, {} levels): timer_jiffies {}, {} pending", to_string(g), g.depth,
                                q.timer_jiffies(), q.pending());
    return l;
}

template <class Q>
class QueueSession final : public Session {
public:
    QueueSession(Design d, std::string design, const Options& o)
        : d_(d), design_(std::move(design)), options_(o),
          input_(o.workload.trace ? std::make_unique<InputFile>(*o.workload.trace) : nullptr),
          feed_(input_ ? std::make_unique<TraceFeed>(open_timersim_source(*input_)) : nullptr),
          // Resolved once: a trace's own clock, else a machine booted at the options' HZ.
          clock_(feed_ ? clock_of(feed_->header()) : boot_clock(o.hz)),
          labels_(feed_ ? std::vector<std::string>{} : timer_labels(o.workload)),
          stepper_(queue_config<Q>(queue_params(o, clock_.hz, clock_.start_jiffies)), o.workload, feed_.get()) {
        armed_at_.resize(stepper_.timers());
        for (std::uint32_t t = 0; t < stepper_.timers(); ++t) armed_at_[t] = {clock_.start_jiffies, own_clock(stepper_.queue())};
    }

    std::string design() const override { return design_; }
    unsigned hz() const override { return clock_.hz; }
    double jiffies() const override { return static_cast<double>(stepper_.queue().jiffies()); }
    double start_jiffies() const override { return static_cast<double>(clock_.start_jiffies); }
    std::uint32_t timers() const override { return static_cast<std::uint32_t>(stepper_.timers()); }

    std::string start_frame() override { return render(stepper_.start_frame()); }

    std::string tick() override {
        const TickReport r = stepper_.step(true);
        // A trace arms as it goes: remember where each arm was made from.
        for (const Armed& a : r.armed) note_arm(a.timer);
        return render(r);
    }

    // Quiet ticks record no arms: explain() of a timer a trace armed during
    // them tells the story of an earlier arm.
    void run_quiet(double ticks) override {
        for (double t = 0; t < ticks; ++t) stepper_.step(false);
    }

    std::uint32_t add_timer(const std::string& label, bool deferrable) override {
        const std::uint32_t t = stepper_.add_timer(TimerFlags{.deferrable = deferrable});
        deferrable_ = deferrable_ || deferrable;
        armed_at_.resize(stepper_.timers());
        if (labels().size() < stepper_.timers()) mutable_labels().resize(stepper_.timers());
        mutable_labels()[t] = label;
        return t;
    }

    std::string arm(std::uint32_t timer, double timeout_jiffies) override {
        if (timer >= stepper_.timers()) return error_json("no such timer");
        TickReport r = now_frame();
        // Signed: a file may arm a timer whose expiry has already passed.
        const auto delta = static_cast<std::int64_t>(timeout_jiffies);
        r.armed.push_back(stepper_.arm_now(timer, stepper_.queue().jiffies() + static_cast<Jiffies>(delta)));
        note_arm(timer);
        return render(r);
    }

    std::string cancel(std::uint32_t timer) override {
        if (timer >= stepper_.timers()) return error_json("no such timer");
        TickReport r = now_frame();
        r.armed.push_back(stepper_.cancel_now(timer));
        return render(r);
    }

    std::string placement(std::uint32_t timer) const override {
        if (timer >= stepper_.timers()) return error_json("no such timer");
        const Placement raw = stepper_.placement(timer);
        const Placement p = drawn(stepper_.queue(), raw);
        ordered_json o = ordered_json::object();
        o["pending"] = p.pending;
        o["deferrable_base"] = p.deferrable_base;
        o["level"] = p.level;
        o["slot"] = p.slot;
        o["idx"] = raw.slot;
        o["expires"] = p.expires;
        o["bucket_expiry"] = p.bucket_expiry;
        o["requested"] = stepper_.requested(timer);
        return to_js(o);
    }

    // Every pending timer as [timer, level, slot, bucket_expiry], drawn as
    // the frames draw them: what the page's timer lists are refreshed from,
    // since some moves are no call of ours and not in any frame (netty's
    // transfer from its queue, scheme 4's overflow walk).
    std::string placements() const override {
        ordered_json out = ordered_json::array();
        for (std::uint32_t t = 0; t < stepper_.timers(); ++t) {
            const Placement p = drawn(stepper_.queue(), stepper_.placement(t));
            if (p.pending) out.push_back(ordered_json::array({t, p.level, p.slot, p.bucket_expiry}));
        }
        return to_js(out);
    }

    std::string explain(std::uint32_t timer) const override {
        if (timer >= stepper_.timers()) return "no such timer";
        const auto [now, clk] = armed_at_[timer];
        const Jiffies expires = explained_expiry(timer);
        const std::optional<Jiffies> own = clk == now ? std::nullopt : std::optional<Jiffies>(clk);
        std::string out = explain_title(now, expires, clock_.hz) + "\n";
        if constexpr (std::is_same_v<Q, ModernWheel>)
            out += explain_modern_text(now, expires, clock_.hz, own);
        else if constexpr (std::is_same_v<Q, Modern69Wheel>)
            out += explain_modern69_text(now, expires, clock_.hz, own, base_of(timer) == Modern69Wheel::base_local,
                                         base_of(timer) == Modern69Wheel::base_def);
        else if constexpr (std::is_same_v<Q, ClassicWheel>)
            out += explain_classic_text(now, expires, clock_.hz, options_.slack, options_.geometry, own);
        else if constexpr (is_configurable<Q>)
            out += explain_wheel_text(now, expires, clock_.hz, design_, stepper_.queue().geometry(), own);
        else if constexpr (std::is_same_v<Q, HeapQueue>)
            out += "Heap: an exact priority queue ordered by expires; the timer fires at the first tick with "
                   "jiffies >= expires, never late and never early.\n";
        else {
            // `timersim explain --design NAME` (sim/report/seed_views.cpp); the
            // list schemes have no buckets and the CLI says so.
            try {
                out += explain_seed_text(d_, now, expires, clock_.hz, own);
            } catch (const SeedViewError& e) {
                out += std::string(e.what()) + "\n";
            }
        }
        return out;
    }

    // The CLI command that prints the same explanation.
    std::string explain_command(std::uint32_t timer) const override {
        if (timer >= stepper_.timers() || d_ == Design::heap || d_ == Design::scheme1 || d_ == Design::scheme2)
            return "";
        const auto [now, clk] = armed_at_[timer];
        std::string cmd = fmt::format("timersim explain --hz {} --now {}", clock_.hz, now);
        if (clk != now) cmd += fmt::format(" --clk {}", clk);
        cmd += fmt::format(" --expires {} --design {}", explained_expiry(timer), design_);
        if (design_ == "classic") {
            if (!options_.slack) cmd += " --slack off";
            else if (*options_.slack >= 0) cmd += fmt::format(" --slack {}", *options_.slack);
            if (options_.geometry.tvr_bits != classic::Geometry::normal().tvr_bits) cmd += " --base-small";
        }
        if constexpr (std::is_same_v<Q, Modern69Wheel>) {
            if (base_of(timer) == Modern69Wheel::base_local) cmd += " --pinned";
            if (base_of(timer) == Modern69Wheel::base_def) cmd += " --deferrable";
        }
        return cmd;
    }

    std::string labels_json() const override {
        return to_js(labels());
    }

private:
    struct ArmedAt {
        Jiffies now = 0;
        Jiffies clk = 0;
    };

    // What explain is asked about: the requested expiry, except on the
    // configurable cascading wheel, whose explain knows no slack: there the
    // expiry after slack, as the queue holds it.
    Jiffies explained_expiry(std::uint32_t timer) const {
        if constexpr (std::is_same_v<Q, CascadingWheel>) return stepper_.placement(timer).expires;
        return stepper_.requested(timer);
    }

    // modern-6.9: the base the timer is on, or was last (6.9 get_timer_cpu_base()).
    auto base_of(std::uint32_t timer) const {
        if constexpr (std::is_same_v<Q, Modern69Wheel>) return stepper_.queue().base_of(stepper_.queue_id(timer));
        else return 0;
    }

    const std::vector<std::string>& labels() const { return feed_ ? feed_->labels() : labels_; }
    std::vector<std::string>& mutable_labels() {
        if (feed_) throw std::logic_error("a trace session names its own timers");
        return labels_;
    }

    void note_arm(std::uint32_t timer) {
        if (armed_at_.size() < stepper_.timers()) armed_at_.resize(stepper_.timers());
        Jiffies clk = own_clock(stepper_.queue());
        // modern-6.9: the clock of the base it went on, each has its own.
        if constexpr (std::is_same_v<Q, Modern69Wheel>) clk = snapshot(stepper_.queue().wheel(base_of(timer))).clk;
        armed_at_[timer] = {stepper_.queue().jiffies(), clk};
    }

    TickReport now_frame() const {
        TickReport r;
        r.tick = stepper_.tick();
        r.jiffies = stepper_.queue().jiffies();
        return r;
    }

    std::string render(const TickReport& r) const {
        deferrable_ = deferrable_ || (feed_ && feed_->deferrable_seen());
        const View view{clock_.hz, clock_.start_jiffies, labels(), deferrable_};
        if constexpr (is_configurable<Q>) {
            // Frames as the seeds' queues have them, placements in rows.
            TickReport shown = r;
            const Q& q = stepper_.queue();
            for (Moved& m : shown.cascaded) m = {m.timer, drawn(q, m.from), drawn(q, m.to)};
            for (Armed& a : shown.armed) a.at = drawn(q, a.at);
            return render_layout_json(design_, wheel_layout(stepper_, deferrable_), shown, view);
        } else {
            return render_json(stepper_.queue(), r, view);
        }
    }

    Design d_;
    std::string design_;
    Options options_;
    mutable bool deferrable_ = false; // a deferrable timer was added: draw that base
    std::unique_ptr<InputFile> input_; // a trace session's file, read as the feed goes
    std::unique_ptr<TraceFeed> feed_;
    Clock clock_;
    std::vector<std::string> labels_;
    Stepper<Q> stepper_;
    std::vector<ArmedAt> armed_at_;
};

// The registry (sim/machine/design_list.hpp) decides what the page offers:
// every design's queue through with_design_queue(), so a design added there
// appears here, and the exactness test, which opens every design designs()
// lists, runs it.
std::unique_ptr<Session> make_session(Design d, const Options& o) {
    const std::string name = d == Design::wheel ? o.wheel_name : std::string(to_string(d));
    const std::optional<WheelGeometry> wheel =
        d == Design::wheel ? std::optional(o.wheel->geometry(o.hz)) : std::nullopt;
    return with_design_queue(d, wheel, [&]<class Q>() -> std::unique_ptr<Session> {
        return std::make_unique<QueueSession<Q>>(d, name, o);
    });
}

// Errors are returned, never thrown into JS: a null session and the message here.
std::string last_error;

// `design`: a name or alias of the registry, or wheel:SPEC (a bad spec is
// refused with the text `timersim --design` prints).
Session* open_session(const std::string& design, const std::string& options) {
    last_error.clear();
    try {
        Options o = parse_options(options);
        if (design == "wheel" || design.starts_with("wheel:")) {
            try {
                o.wheel = parse_wheel_spec(design);
                o.wheel->geometry(o.hz);
            } catch (const WheelSpecError& e) {
                throw std::invalid_argument(fmt::format("--design: {}: {}", design, e.what()));
            }
            o.wheel_name = to_string(*o.wheel);
            return make_session(Design::wheel, o).release();
        }
        const std::optional<Design> d = design_from_string(design);
        if (!d) throw std::invalid_argument(fmt::format("--design: unknown design '{}' (expected {})", design,
                                                        design_names()));
        return make_session(*d, o).release();
    } catch (const std::exception& e) {
        last_error = e.what();
        return nullptr;
    }
}

// Every design of the registry (every_design()), with its one-line summary.
std::string designs_json() {
    ordered_json rows = ordered_json::array();
    for (Design d : every_design()) {
        ordered_json o = ordered_json::object();
        o["name"] = to_string(d);
        o["summary"] = design_info(d).summary;
        rows.push_back(std::move(o));
    }
    return to_js(rows);
}

// The configurable wheel's presets (wheel/configurable/wheel_spec.hpp).
std::string wheel_presets_json() {
    ordered_json rows = ordered_json::array();
    for (const WheelPreset& p : wheel_presets()) {
        ordered_json o = ordered_json::object();
        o["name"] = p.name;
        o["spec"] = p.spec;
        o["source"] = p.source;
        rows.push_back(std::move(o));
    }
    return to_js(rows);
}

// A timeout as the CLI reads it ("36", "300ms", "1.5s") in jiffies at `hz`;
// -1 and last_error when it does not parse.
double parse_timeout(const std::string& text, unsigned hz) {
    last_error.clear();
    try {
        return static_cast<double>(parse_timeout_jiffies(text, hz));
    } catch (const std::exception& e) {
        last_error = e.what();
        return -1;
    }
}

// Kernel ftrace text at `in` (wasm fs) to a timersim trace at `out`, as
// `timersim import IN -o OUT` does (HZ from the text's '# hz=' line or its
// jiffies, unless `hz` is non-zero). Returns "" or the error.
std::string import_ftrace(const std::string& in, const std::string& out, unsigned hz) {
    try {
        InputFile file(in);
        const std::string text = file.read_all();
        HzChoice choice;
        if (hz) choice.option = hz;
        HzResolution resolved = resolve_ftrace_hz(text, file.name(), choice);
        // Events on the kernel's own jiffies, as every kernel trace source lands them.
        const KernelClock clock(std::move(resolved.clock_samples), resolved.hz);
        FtraceReader reader(std::string_view(text), file.name(), resolved.hz);
        FtraceImporter importer(reader);
        importer.use_clock(&clock);
        importer.arm_before_trace(std::move(resolved.pre_trace_fires));
        std::unique_ptr<std::FILE, int (*)(std::FILE*)> f(std::fopen(out.c_str(), "w"), &std::fclose);
        if (!f) return out + ": cannot write";
        std::optional<TraceWriter> writer;
        const auto open_output = [&] {
            writer.emplace(f.get(), importer.header(), fmt::format("imported from {} by timersim import", file.name()));
        };
        TraceEvent event;
        while (importer.next(event)) {
            if (!writer) open_output();
            writer->write(event);
        }
        if (!writer) open_output();
        writer->flush();
        return "";
    } catch (const std::exception& e) {
        return e.what();
    }
}

// The JS-visible wrappers of Session: embind binds member functions, and
// catching here keeps a C++ exception (say, a trace error found while
// ticking) from reaching JS as an abort.
template <class F>
auto guarded(F f) {
    try {
        return f();
    } catch (const std::exception& e) {
        return error_json(e.what());
    }
}

std::string s_start_frame(Session& s) { return guarded([&] { return s.start_frame(); }); }
std::string s_tick(Session& s) { return guarded([&] { return s.tick(); }); }
std::string s_run_quiet(Session& s, double n) {
    return guarded([&] {
        s.run_quiet(n);
        return to_js(ordered_json::object());
    });
}
std::string s_arm(Session& s, std::uint32_t t, double j) { return guarded([&] { return s.arm(t, j); }); }
std::string s_cancel(Session& s, std::uint32_t t) { return guarded([&] { return s.cancel(t); }); }

} // namespace

} // namespace timersim::web

EMSCRIPTEN_BINDINGS(timersim_playground) {
    using namespace emscripten;
    using timersim::web::Session;
    class_<Session>("Session")
        .function("design", &Session::design)
        .function("startFrame", &timersim::web::s_start_frame)
        .function("tick", &timersim::web::s_tick)
        .function("runQuiet", &timersim::web::s_run_quiet)
        .function("addTimer", &Session::add_timer)
        .function("arm", &timersim::web::s_arm)
        .function("cancel", &timersim::web::s_cancel)
        .function("explain", &Session::explain)
        .function("explainCommand", &Session::explain_command)
        .function("placement", &Session::placement)
        .function("placements", &Session::placements)
        .function("jiffies", &Session::jiffies)
        .function("startJiffies", &Session::start_jiffies)
        .function("hz", &Session::hz)
        .function("timers", &Session::timers)
        .function("labels", &Session::labels_json);
    function("openSession", &timersim::web::open_session, allow_raw_pointers());
    function("lastError", optional_override([] { return timersim::web::last_error; }));
    function("designs", &timersim::web::designs_json);
    function("wheelPresets", &timersim::web::wheel_presets_json);
    function("parseTimeout", &timersim::web::parse_timeout);
    function("importFtrace", &timersim::web::import_ftrace);
}
