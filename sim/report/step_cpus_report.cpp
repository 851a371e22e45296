#include "sim/report/step_cpus_report.hpp"

#include <fmt/core.h>
#include <fmt/format.h>

namespace timersim {

namespace {

std::string row(std::string_view cpu, std::string_view tick, std::string_view softirq, std::string_view pending,
                std::string_view after) {
    return fmt::format("  {:>3}  {:<4}  {:<7}  {:<13}  {}", cpu, tick, softirq, pending, after);
}

// What the CPU does after the tick: tick on, or sleep (NOHZ idle) until its
// programmed wakeup.
std::string after_tick(const CpuTick& c, const View& v) {
    if (!c.idle) return "ticking";
    if (!c.wakeup) return "idle, no timer to wake for";
    return fmt::format("idle, wakes at tick {}", jiffies_diff(*c.wakeup, v.start));
}

} // namespace

std::string render_cpus_text(const std::vector<CpuTick>& cpus, const View& v) {
    std::string out = row("CPU", "tick", "softirq", "pending l/g/d", "then") + "\n";
    for (std::size_t i = 0; i < cpus.size(); ++i) {
        const CpuTick& c = cpus[i];
        const bool start = c.report.start;
        const std::string_view tick = start ? "" : c.woke ? "woke" : c.ticked ? "ran" : "-";
        const std::string_view softirq = start || !c.ticked ? "" : c.report.softirq ? "raised" : "no";
        const std::string pending = fmt::format("{}/{}/{}", c.pending[Modern69Wheel::base_local],
                                                c.pending[Modern69Wheel::base_global],
                                                c.pending[Modern69Wheel::base_def]);
        out += row(fmt::format("{}", i), tick, softirq, pending, after_tick(c, v)) + "\n";
    }
    for (std::size_t i = 0; i < cpus.size(); ++i)
        put_modern_events(out, cpus[i].report, v, fmt::format("CPU {} ", i));
    return out;
}

bool cpus_quiet(const std::vector<CpuTick>& cpus) {
    for (const CpuTick& c : cpus)
        if (c.report.start || c.ticked || !c.report.fired.empty() || !c.report.armed.empty()) return false;
    return true;
}

std::string cpus_quiet_title(const TickReport& first, const TickReport& last, const View& v) {
    if (first.tick == last.tick) return frame_title(first, v);
    const std::string t = fmt::format("=== ticks {}..{}: jiffies {}..{}, no CPU ticks ", first.tick, last.tick,
                                      first.jiffies, last.jiffies);
    return t.size() < kStepColumns - 1 ? t + std::string(kStepColumns - 1 - t.size(), '=') + "\n" : t + "\n";
}

std::string render_cpus_json(const std::vector<CpuTick>& cpus, const MachineStepper& machine, const View& v) {
    std::string out;
    for (unsigned i = 0; i < cpus.size(); ++i) {
        const CpuTick& c = cpus[i];
        ordered_json base = layout_frame(Modern69Wheel::name, machine.queue(i).layout(), c.report, v);
        // The one-CPU view's softirq cost is its queue's: here the work of a
        // remote expiry is on the idle CPU's queue, so none is shown.
        base.erase("cost");
        ordered_json frame = ordered_json::object();
        for (auto it = base.begin(); it != base.end(); ++it) {
            frame[it.key()] = std::move(it.value());
            if (it.key() != "hz") continue;
            frame["cpu"] = i;
            frame["cpus"] = cpus.size();
            frame["ticked"] = c.ticked;
            frame["woke"] = c.woke;
            frame["idle"] = c.idle;
            frame["wakeup"] = c.wakeup ? ordered_json(*c.wakeup) : ordered_json(nullptr);
            ordered_json pending = ordered_json::object();
            pending["local"] = c.pending[Modern69Wheel::base_local];
            pending["global"] = c.pending[Modern69Wheel::base_global];
            pending["deferrable"] = c.pending[Modern69Wheel::base_def];
            frame["pending_by_base"] = std::move(pending);
        }
        out += frame_line(frame);
    }
    return out;
}

} // namespace timersim
