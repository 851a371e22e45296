// What `timersim step` prints: each tick of each wheel (sim/machine/
// stepper.hpp) as 80-column text (the fired, cascaded and armed timers, the
// softirq's cost, every level as a row of buckets) or as one JSON Lines
// object (schema timersim.step.v1, docs/output.md), with every timer listed.
#pragma once

#include "sim/machine/stepper.hpp"
#include "sim/report/json.hpp"
#include "wheel/core/heap_queue.hpp"
#include "wheel/core/queue_layout.hpp"

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

// Every text line fits an 80-column terminal (the grid rows are exactly 80).
inline constexpr std::size_t kStepColumns = 80;

struct View {
    unsigned hz;
    Jiffies start; // jiffies at tick 0
    const std::vector<std::string>& labels;
    // Draw the modern deferrable base (BASE_DEF) too: set once a trace armed a
    // deferrable timer; until then that base is empty and not drawn.
    const bool& deferrable;
    // What the frames name the design: a wheel:SPEC's spec; empty: Q::name.
    std::string_view design = {};
    // The machine's CPUs (step --cpus): above one, a JSON fired timer says
    // whether it was a remote expiry ("remote_for").
    unsigned cpus = 1;
};

// The title line of a frame (one tick of every wheel shown).
std::string frame_title(const TickReport& r, const View& v);
std::string render_text(const ClassicWheel& q, const TickReport& r, const View& v);
std::string render_text(const ModernWheel& q, const TickReport& r, const View& v);
std::string render_json(const ClassicWheel& q, const TickReport& r, const View& v);
std::string render_json(const ModernWheel& q, const TickReport& r, const View& v);
std::string render_json(const HeapQueue& q, const TickReport& r, const View& v);

// The seeds' designs (schemes, netty, cog) and the configurable wheel
// (wheel:SPEC): their QueueLayout, drawn as rows of buckets (rings,
// levels) and list lengths.
std::string render_layout_text(std::string_view design, const QueueLayout& layout, const TickReport& r, const View& v);
std::string render_layout_json(std::string_view design, const QueueLayout& layout, const TickReport& r, const View& v);
template <class Q>
    requires requires(const Q& q) { q.layout(); }
std::string render_text(const Q& q, const TickReport& r, const View& v) {
    return render_layout_text(v.design.empty() ? Q::name : v.design, q.layout(), r, v);
}
template <class Q>
    requires requires(const Q& q) { q.layout(); }
std::string render_json(const Q& q, const TickReport& r, const View& v) {
    return render_layout_json(v.design.empty() ? Q::name : v.design, q.layout(), r, v);
}

// The tick's fired, cascaded, armed and cancelled timers as text lines,
// each opening with `who` (several CPUs: "CPU 1 "), the buckets named as
// the modern wheel's (L2[5]).
void put_modern_events(std::string& out, const TickReport& r, const View& v, std::string_view who);
// A layout frame (render_layout_json()) as a JSON object, to add to, and
// any frame as its JSON Lines line.
ordered_json layout_frame(std::string_view design, const QueueLayout& l, const TickReport& r, const View& v);
std::string frame_line(const ordered_json& frame);

// Appends `text` as one or more lines of at most kStepColumns, breaking at
// spaces and indenting continuation lines by `indent`.
void put(std::string& out, std::string_view text, std::size_t indent = 6);
// "1 timer", "3 timers"
std::string plural(std::uint64_t n, std::string_view one, std::string_view many);

} // namespace timersim
