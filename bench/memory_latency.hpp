// Memory latency reference: dependent loads from a random cycle through a
// buffer of a given size, i.e. the cost of one cache miss at that working set
// size. An intrusive bucket list walked in random memory order pays about
// this much per timer, which is what the expiry benchmarks at 1M and 10M
// pending timers show.
#pragma once

namespace timersim::bench {

// Registers "memory_latency/MiB:<size>" for a few working set sizes (counter
// ns_per_load).
void register_memory_latency();

} // namespace timersim::bench
