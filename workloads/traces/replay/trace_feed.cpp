#include "workloads/traces/replay/trace_feed.hpp"

#include <fmt/core.h>

#include <string_view>

namespace timersim {

namespace {

constexpr std::uint32_t kNoFeedId = 0xFFFFFFFFu;

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

std::uint32_t TraceFeed::feed_id(std::uint32_t source_id, const TimerKey& key, std::string_view label,
                                 TimerFlags flags) {
    if (source_id >= feed_ids_.size()) feed_ids_.resize(std::size_t{source_id} + 1, kNoFeedId);
    std::uint32_t& id = feed_ids_[source_id];
    if (id != kNoFeedId) return id;
    id = static_cast<std::uint32_t>(labels_.size());
    const std::string text = key_text(key);
    labels_.push_back(short_label(label.empty() ? std::string_view(text) : label));
    first_flags_.push_back(flags);
    return id;
}

bool TraceFeed::read_ahead() {
    TraceEvent e;
    if (!source_->next(e)) return false;
    TraceOp op;
    op.timer = feed_id(e.timer, e.key, e.label, TimerFlags{.deferrable = e.flags.deferrable});
    // A timer seen first as a cb= (armed before the trace began) is named by
    // its key, and has no flags: a name and flags stay as first seen.
    if (e.cb && e.cb_key) feed_id(*e.cb, *e.cb_key, {}, TimerFlags{});
    op.cancel = e.kind == TraceEventKind::cancel;
    if (!op.cancel) op.expires = expiry_jiffies(source_->header(), e);
    op.flags = first_flags_[op.timer];
    op.pinned = e.flags.pinned;
    ahead_.emplace(jiffies_at(source_->header(), e.time_ns), op);
    return true;
}

} // namespace timersim
