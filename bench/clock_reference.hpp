// Clock reference: a benchmark whose cost in cycles is known (a chain of
// dependent register adds, one cycle each), so a run reports the clock speed
// the CPU actually ran at. On a shared VM the boost clock moves with the
// host's load; two runs' ns figures compare only at similar GHz.
#pragma once

namespace timersim::bench {

// Registers "clock_reference/<tag>" (reports the counter GHz).
void register_clock_reference(const char* tag);

} // namespace timersim::bench
