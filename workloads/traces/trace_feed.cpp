#include "workloads/traces/trace_feed.hpp"

#include <fmt/core.h>

#include <string_view>

namespace timersim {

namespace {

// Timer names are cut so that event lines stay short.
std::string short_label(std::string_view s) {
    return s.size() <= 16 ? std::string(s) : fmt::format("{}..", s.substr(0, 14));
}

std::string key_text(const TimerKey& key) {
    return key.symbolic ? std::string(key.token) : fmt::format("{}", key.number);
}

} // namespace

const std::vector<TraceOp>& TraceFeed::at(Jiffies j) {
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

void TraceFeed::name_up_to(std::uint32_t id, const TraceEvent& e) {
    while (labels_.size() <= id) {
        const auto next = static_cast<std::uint32_t>(labels_.size());
        if (next == e.timer) {
            // The event's own timer, at its first event: its label= or its key.
            const std::string key = key_text(e.key);
            labels_.push_back(short_label(e.label.empty() ? std::string_view(key) : e.label));
            first_flags_.push_back(TimerFlags{.deferrable = e.flags.deferrable});
        } else {
            // Named so far only as a cb= (armed before the trace began): its
            // key, and no flags until an event of its own says otherwise.
            labels_.push_back(short_label(key_text(reader_.timer_key(next))));
            first_flags_.push_back(TimerFlags{});
        }
    }
}

bool TraceFeed::read_ahead() {
    TraceEvent e;
    if (!reader_.next(e)) return false;
    TraceOp op;
    op.timer = e.timer;
    op.cancel = e.kind == TraceEventKind::cancel;
    if (!op.cancel) op.expires = expiry_jiffies(reader_.header(), e);
    name_up_to(std::max(e.timer, e.cb.value_or(0)), e);
    op.flags = first_flags_[e.timer];
    op.pinned = e.flags.pinned;
    ahead_.emplace(jiffies_at(reader_.header(), e.time_ns), op);
    return true;
}

} // namespace timersim
