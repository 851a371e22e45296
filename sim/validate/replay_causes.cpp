// The names validate's report gives its checks and cause classes
// (docs/validation.md, "Cause classes").
#include "sim/validate/kernel_replay.hpp"

namespace timersim {

std::string_view to_string(ReplayCheck check) noexcept {
    switch (check) {
    case ReplayCheck::idx: return "idx";
    case ReplayCheck::expiry: return "expiry";
    }
    return "?";
}

std::string_view to_string(ReplayCause cause) noexcept {
    switch (cause) {
    case ReplayCause::our_clock_differs: return "our base clock differs";
    case ReplayCause::kernel_clock_differs: return "kernel base clock differs";
    case ReplayCause::index_differs: return "index differs";
    case ReplayCause::flags_changed: return "deferrable flag changed";
    case ReplayCause::baseclk_differs: return "baseclk differs";
    case ReplayCause::fired_late: return "fired late";
    case ReplayCause::fired_earlier: return "fired earlier by our model";
    case ReplayCause::not_due: return "not due in our model";
    case ReplayCause::not_collected: return "not collected by our run";
    case ReplayCause::not_pending: return "not pending in our model";
    case ReplayCause::other_cpu: return "pending on another CPU in our model";
    case ReplayCause::order_differs: return "fired in another order by our run";
    }
    return "?";
}

} // namespace timersim
