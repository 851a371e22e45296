// validate's replay as the classifier of a trace's lost history for the
// replays of run and compare (workloads/traces/kernel/lost_history.hpp).
#include "sim/validate/kernel_replay.hpp"

namespace timersim {

LostHistoryClasses classify_lost_history(const LostHistoryRequest& request) {
    ReplayOptions options{.hz = request.hz,
                          .force_hz = request.forced_hz,
                          .max_notes_per_class = 0,
                          .filter = request.filter,
                          .kernel = request.kernel};
    LostHistoryClasses classes;
    options.lost_history = &classes;
    {
        const std::unique_ptr<InputFile> in = request.pass();
        options.survey = survey_kernel_trace(*in, options);
    }
    const std::unique_ptr<InputFile> in = request.pass();
    replay_kernel_trace(*in, options);
    return classes;
}

} // namespace timersim
