// TraceFeed: a trace of any layout (trace_source.hpp) served a jiffy at a
// time, for `timersim step`, which drives the wheels tick by tick without
// the engine.
// at(j) returns the operations whose time falls in jiffy j (jiffies_at()),
// in file order. Several wheels ask in turn for the same jiffy and get the
// same batch; only one event beyond the batch is read ahead, so memory stays
// constant whatever the trace's length (but for one name and one flag per
// timer). Reader errors (TraceError) pass through.
//
//   TraceFeed feed(open_trace_source(in, kind, hz));
//   for (Jiffies j = start; ...; ++j)
//       for (const TraceOp& op : feed.at(j)) { op.cancel ? del_timer : mod_timer }
#pragma once

#include "wheel/core/timer_queue.hpp"
#include "workloads/traces/replay/trace_source.hpp"

#include <cstdint>
#include <cstdio>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace timersim {

// One operation of a trace, as every wheel applies it.
struct TraceOp {
    std::uint32_t timer = 0;  // the reader's dense id
    bool cancel = false;      // del_timer(); otherwise mod_timer()
    Jiffies expires = 0;      // arm/modify: the absolute expiry asked for
    TimerFlags flags;         // TIMER_DEFERRABLE, fixed by the timer's first event
    bool pinned = false;      // TIMER_PINNED: 4.x mod_timer_pinned(), no slack
};

class TraceFeed {
public:
    explicit TraceFeed(std::unique_ptr<TraceSource> source) : source_(std::move(source)) {}
    TraceFeed(std::FILE* in, std::string name) : TraceFeed(open_timersim_source(in, std::move(name))) {}

    const TraceHeader& header() { return source_->header(); }
    const TraceFilterCounts& filter_counts() const noexcept { return source_->filter_counts(); }
    // A kernel trace's version evidence (TraceSource::kernel_evidence()), else null.
    const KernelVersionEvidence* kernel_evidence() const { return source_->kernel_evidence(); }
    // Names for the display, by dense id: an event's label= (of the timer's
    // first event), or its key. Every id up to the highest seen has one, also
    // a timer named so far only as the cb= of another's event.
    const std::vector<std::string>& labels() const noexcept { return labels_; }
    // The flags of each timer's first event, by dense id (as labels()).
    const std::vector<TimerFlags>& first_flags() const noexcept { return first_flags_; }
    // Has any batch so far held a deferrable timer? (Then the modern view
    // also draws the deferrable base.)
    const bool& deferrable_seen() const noexcept { return deferrable_seen_; }

    const std::vector<TraceOp>& at(Jiffies j);

private:
    bool read_ahead();
    // The feed's id of a source's timer: dense, in order of first
    // appearance (as an event's timer, then as its cb=), as a timersim
    // trace's reader numbers them. A kernel trace's importer numbers every
    // timer it saw, also those it emits no event of.
    std::uint32_t feed_id(std::uint32_t source_id, const TimerKey& key, std::string_view label, TimerFlags flags);

    std::unique_ptr<TraceSource> source_;
    std::optional<std::pair<Jiffies, TraceOp>> ahead_;
    bool batch_ = false;
    Jiffies batch_jiffy_ = 0;
    std::vector<TraceOp> ops_;
    std::vector<std::string> labels_;
    std::vector<TimerFlags> first_flags_;
    std::vector<std::uint32_t> feed_ids_; // by the source's id; kNoFeedId until seen
    bool deferrable_seen_ = false;
};

} // namespace timersim
