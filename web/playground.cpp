// The browser playground's C++ side: timersim's own queues, driven tick by
// tick by the same Stepper as `timersim step` (sim/machine/stepper.hpp), each
// frame rendered by the same JSON writer (sim/report/step_report.hpp,
// schema timersim.step.v1), the explain text from the same functions as
// `timersim explain` (sim/report/explain_report.hpp), and the trace readers
// of workloads/traces/. Compiled to WebAssembly by scripts/build-web only;
// the native build never sees this file.
//
//   const s = Module.openSession("modern", '{"hz":250}');
//   const t = s.addTimer("300ms");            // timer_setup()
//   s.arm(t, s.parseTimeout("300ms"));        // mod_timer(jiffies + 75): JSON frame
//   s.tick();                                 // one tick: JSON frame of what it did
//   s.explain(t);                             // the `timersim explain` text
//   s.delete();
//
// Every call that can fail on user input returns {"error": "..."} (JSON) or
// throws nothing across the boundary: JS sees the message, never an abort.
#include "sim/machine/design.hpp"
#include "sim/machine/stepper.hpp"
#include "sim/report/explain_report.hpp"
#include "sim/report/json.hpp"
#include "sim/report/step_report.hpp"
#include "sim/cli/timeout_arg.hpp"
#include "wheel/heap_queue.hpp"
#include "wheel/wheel_snapshot.hpp"
#include "workloads/traces/ftrace_reader.hpp"
#include "workloads/traces/hz_inference.hpp"
#include "workloads/traces/text_stream.hpp"
#include "workloads/traces/trace_writer.hpp"

#include <emscripten/bind.h>
#include <fmt/core.h>
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <cstdio>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace timersim::web {

namespace {

std::string error_json(const std::string& what) { return fmt::format("{{\"error\":{}}}", json_string(what)); }

// What a session runs, from the options JSON: {"hz":250, "slack":"default"|"off"|N,
// "base_small":false} plus at most one of "timeouts":["36","300ms"],
// "churn":{"connections":200,"message_interval_ms":1000,"seed":1} or
// "trace":"/path/in/the/wasm/fs" (a timersim trace v1, whose header fixes HZ).
struct Options {
    unsigned hz = 250;
    std::optional<std::int64_t> slack = -1;
    classic::Geometry geometry = classic::Geometry::normal();
    StepWorkload workload;
};

Options parse_options(const std::string& text) {
    const nlohmann::json j = nlohmann::json::parse(text);
    Options o;
    o.hz = j.value("hz", 250u);
    if (o.hz < 1 || o.hz > 10000) throw std::invalid_argument("hz must be 1..10000");
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
    virtual std::uint32_t add_timer(const std::string& label) = 0;
    virtual std::string arm(std::uint32_t timer, double timeout_jiffies) = 0;
    virtual std::string cancel(std::uint32_t timer) = 0;
    virtual std::string explain(std::uint32_t timer) const = 0;
    virtual std::string explain_command(std::uint32_t timer) const = 0;
    virtual std::string placement(std::uint32_t timer) const = 0;
    virtual double jiffies() const = 0;
    virtual double start_jiffies() const = 0;
    virtual unsigned hz() const = 0;
    virtual std::uint32_t timers() const = 0;
    virtual std::string labels_json() const = 0;
};

template <class Q>
typename Q::Config queue_config(const Options& o, Jiffies start) {
    if constexpr (std::is_same_v<Q, ClassicWheel>)
        return {.hz = o.hz, .start_jiffies = start, .geometry = o.geometry, .slack = o.slack};
    else
        return {.hz = o.hz, .start_jiffies = start};
}

// The wheel's own clock a mod_timer() at this instant computes the placement
// from: modern base->clk after forward_timer_base() (read back after the
// arm), classic timer_jiffies; the heap has none.
template <class Q>
Jiffies own_clock(const Q& q) {
    if constexpr (std::is_same_v<Q, ModernWheel>) return snapshot(q).clk;
    else if constexpr (std::is_same_v<Q, ClassicWheel>) return q.timer_jiffies();
    else return q.jiffies();
}

template <class Q>
class QueueSession final : public Session {
public:
    QueueSession(std::string design, const Options& o)
        : design_(std::move(design)), options_(o),
          input_(o.workload.trace ? std::make_unique<InputFile>(*o.workload.trace) : nullptr),
          feed_(input_ ? std::make_unique<TraceFeed>(*input_) : nullptr),
          hz_(feed_ ? feed_->header().hz : o.hz),
          start_(feed_ ? feed_->header().start_jiffies : initial_jiffies(hz_)),
          labels_(feed_ ? std::vector<std::string>{} : timer_labels(o.workload)),
          stepper_(queue_config<Q>(with_hz(o, hz_), start_), o.workload, feed_.get()) {
        armed_at_.resize(stepper_.timers());
        for (std::uint32_t t = 0; t < stepper_.timers(); ++t) armed_at_[t] = {start_, own_clock(stepper_.queue())};
    }

    std::string design() const override { return design_; }
    unsigned hz() const override { return hz_; }
    double jiffies() const override { return static_cast<double>(stepper_.queue().jiffies()); }
    double start_jiffies() const override { return static_cast<double>(start_); }
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

    std::uint32_t add_timer(const std::string& label) override {
        const std::uint32_t t = stepper_.add_timer();
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
        const Placement p = stepper_.placement(timer);
        // Modern slots as step's JSON has them: inside the level, and idx.
        const bool modern = std::is_same_v<Q, ModernWheel>;
        return fmt::format("{{\"pending\":{},\"level\":{},\"slot\":{},\"idx\":{},\"expires\":{},"
                           "\"bucket_expiry\":{},\"requested\":{}}}",
                           p.pending, p.level, modern ? p.slot % modern::kLevelSize : p.slot, p.slot, p.expires,
                           p.bucket_expiry, stepper_.requested(timer));
    }

    std::string explain(std::uint32_t timer) const override {
        if (timer >= stepper_.timers()) return "no such timer";
        const auto [now, clk] = armed_at_[timer];
        const Jiffies expires = stepper_.requested(timer);
        const std::optional<Jiffies> own = clk == now ? std::nullopt : std::optional<Jiffies>(clk);
        std::string out = explain_title(now, expires, hz_) + "\n";
        if constexpr (std::is_same_v<Q, ModernWheel>)
            out += explain_modern_text(now, expires, hz_, own);
        else if constexpr (std::is_same_v<Q, ClassicWheel>)
            out += explain_classic_text(now, expires, hz_, options_.slack, options_.geometry, own);
        else
            out += "Heap: an exact priority queue ordered by expires; the timer fires at the first tick with "
                   "jiffies >= expires, never late and never early.\n";
        return out;
    }

    // The CLI command that prints the same explanation.
    std::string explain_command(std::uint32_t timer) const override {
        if (timer >= stepper_.timers() || design_ == "heap") return "";
        const auto [now, clk] = armed_at_[timer];
        std::string cmd = fmt::format("timersim explain --hz {} --now {}", hz_, now);
        if (clk != now) cmd += fmt::format(" --clk {}", clk);
        cmd += fmt::format(" --expires {} --design {}", stepper_.requested(timer), design_);
        if (design_ == "classic") {
            if (!options_.slack) cmd += " --slack off";
            else if (*options_.slack >= 0) cmd += fmt::format(" --slack {}", *options_.slack);
            if (options_.geometry.tvr_bits != classic::Geometry::normal().tvr_bits) cmd += " --base-small";
        }
        return cmd;
    }

    std::string labels_json() const override {
        std::vector<std::string> quoted;
        for (const auto& l : labels()) quoted.push_back(json_string(l));
        return fmt::format("[{}]", fmt::join(quoted, ","));
    }

private:
    struct ArmedAt {
        Jiffies now = 0;
        Jiffies clk = 0;
    };

    static Options with_hz(Options o, unsigned hz) {
        o.hz = hz;
        return o;
    }

    const std::vector<std::string>& labels() const { return feed_ ? feed_->labels() : labels_; }
    std::vector<std::string>& mutable_labels() {
        if (feed_) throw std::logic_error("a trace session names its own timers");
        return labels_;
    }

    void note_arm(std::uint32_t timer) {
        if (armed_at_.size() < stepper_.timers()) armed_at_.resize(stepper_.timers());
        armed_at_[timer] = {stepper_.queue().jiffies(), own_clock(stepper_.queue())};
    }

    TickReport now_frame() const {
        TickReport r;
        r.tick = stepper_.tick();
        r.jiffies = stepper_.queue().jiffies();
        return r;
    }

    std::string render(const TickReport& r) const {
        static const bool no_deferrable = false;
        const View view{hz_, start_, labels(), feed_ ? feed_->deferrable_seen() : no_deferrable};
        return render_json(stepper_.queue(), r, view);
    }

    std::string design_;
    Options options_;
    std::unique_ptr<InputFile> input_; // a trace session's file, read as the feed goes
    std::unique_ptr<TraceFeed> feed_;
    unsigned hz_;
    Jiffies start_;
    std::vector<std::string> labels_;
    Stepper<Q> stepper_;
    std::vector<ArmedAt> armed_at_;
};

// The design list (sim/machine/design.hpp) decides what the page offers; this
// maps each to its queue type. A design without a case here is refused by
// name, and the exactness test (web/test/exactness.mjs), which opens every
// design all_designs() lists, fails on it.
std::unique_ptr<Session> make_session(Design d, const Options& o) {
    switch (d) {
    case Design::classic: return std::make_unique<QueueSession<ClassicWheel>>("classic", o);
    case Design::modern: return std::make_unique<QueueSession<ModernWheel>>("modern", o);
    case Design::heap: return std::make_unique<QueueSession<HeapQueue>>("heap", o);
    default: break;
    }
    throw std::invalid_argument(fmt::format("design {} is not in the playground (web/playground.cpp)", to_string(d)));
}

// Errors are returned, never thrown into JS: a null session and the message here.
std::string last_error;

Session* open_session(const std::string& design, const std::string& options) {
    last_error.clear();
    try {
        const std::optional<Design> d = design_from_string(design);
        if (!d) throw std::invalid_argument("unknown design " + design);
        return make_session(*d, parse_options(options)).release();
    } catch (const std::exception& e) {
        last_error = e.what();
        return nullptr;
    }
}

std::string designs_json() {
    std::vector<std::string> names;
    for (Design d : all_designs()) names.push_back(json_string(to_string(d)));
    return fmt::format("[{}]", fmt::join(names, ","));
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
        const HzResolution resolved = resolve_ftrace_hz(text, file.name(), choice);
        TextStream stream(text);
        FtraceReader reader(stream, file.name(), resolved.hz);
        FtraceImporter importer(reader);
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
        return std::string("{}");
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
        .function("jiffies", &Session::jiffies)
        .function("startJiffies", &Session::start_jiffies)
        .function("hz", &Session::hz)
        .function("timers", &Session::timers)
        .function("labels", &Session::labels_json);
    function("openSession", &timersim::web::open_session, allow_raw_pointers());
    function("lastError", optional_override([] { return timersim::web::last_error; }));
    function("designs", &timersim::web::designs_json);
    function("parseTimeout", &timersim::web::parse_timeout);
    function("importFtrace", &timersim::web::import_ftrace);
}
