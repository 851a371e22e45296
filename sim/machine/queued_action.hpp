// QueuedAction: an Action as the engine keeps it in a CPU's calendar
// (EventQueue), 16 bytes instead of 32. The CPU is the calendar's own, and
// each kind keeps only what it runs with: arm its timer, expiry and call,
// cancel its timer, call its tag (Workload::on_action sees nothing else).
// A generator keeps one pending action per connection, so at 1M connections
// this is 16 MB less to hold, sort and walk through (32 instead of 48 bytes
// an event with the time and sequence).
//
//     const QueuedAction q = QueuedAction::of(action);
//     q.timer, q.expires(), q.tag(): what that kind of action needs
#pragma once

#include "workloads/workload.hpp"

#include <cstdint>

namespace timersim {

struct QueuedAction {
    std::uint64_t word = 0;     // arm: the expiry in jiffies; call: the tag
    TimerId timer = kNoTimer;   // arm, cancel
    Action::Kind kind = Action::Kind::call;
    ArmCall call = ArmCall::mod_timer; // arm

    static QueuedAction of(const Action& a) noexcept {
        return QueuedAction{.word = a.kind == Action::Kind::call ? a.tag : a.expires,
                            .timer = a.timer, .kind = a.kind, .call = a.call};
    }
    Jiffies expires() const noexcept { return word; }
    std::uint64_t tag() const noexcept { return word; }
};
static_assert(sizeof(QueuedAction) == 16);

} // namespace timersim
