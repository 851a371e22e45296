// Refusing, up front, a run the machine cannot hold: a generator workload's
// memory is estimated from its parameters (bytes per connection, measured
// per generator) and compared with the memory available (MemAvailable in
// /proc/meminfo) before anything is allocated, instead of dying of
// std::bad_alloc a minute in.
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace timersim::cli {

// A run too big for this machine: one line "timersim: <what>", exit 2 (the
// parameters are at fault, as with a bad value).
class TooBigError : public std::runtime_error {
 public:
  using std::runtime_error::runtime_error;
};

// What one design's run of a workload needs, and what it is (for the message).
struct MemoryEstimate {
  std::uint64_t bytes_per_design = 0;  // 0: unknown (traces), never refused
  std::string option;                  // the option to lower, e.g. "--connections"
  std::string what;                    // e.g. "tcp-retransmit with 50000000 connections"
};

// The simulator's bytes per connection (per timer for burst) of a generator,
// peak resident memory measured on 500,000 connections with some margin; 0
// for a name it does not know.
std::uint64_t bytes_per_connection(std::string_view generator);

// MemAvailable from /proc/meminfo, in bytes (or from the file named by
// $TIMERSIM_MEMINFO, which the tests use); nullopt when it cannot be read.
std::optional<std::uint64_t> available_memory_bytes();

// How many designs to run at once (at most `jobs`, at least 1) so that their
// runs fit in the memory available. Throws TooBigError when not even one
// fits: "--option: <what> needs about X per design, more than the Y of
// memory available (MemAvailable)".
unsigned fit_jobs_to_memory(const MemoryEstimate& estimate, unsigned jobs);

}  // namespace timersim::cli
