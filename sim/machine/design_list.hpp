// The design registry: one row per timer queue a run can use. Everything
// that lists, parses, builds or instantiates designs expands this list:
// the Design enum and its name table (design.hpp, design.cpp), the engine's
// explicit instantiations (engine.cpp), the queue a design builds
// (design_queues.hpp: run_machine(), `timersim step`, the browser
// playground), and so --design, --help, sweep and every listing.
//
// Adding a design is one row here plus its queue (a type modelling
// TimerQueue in wheel/, and its header in design_queues.hpp). A queue whose
// Config takes more than {hz, start_jiffies} gets a queue_config() overload
// there. Design-specific views (explain, levels) are optional: a design
// without one is refused by those commands.
//
// ROW(id, name, Queue, alias, summary, paper_costs, holds_garbage)
//   id             the enumerator
//   name           the name every output prints and --design takes
//   Queue          the queue type (wheel/)
//   alias          another name accepted on the command line, or ""
//   summary        one line for --help and listings
//   paper_costs    counts Varghese & Lauck's START/STOP/PER_TICK/EXPIRY
//   holds_garbage  keeps cancelled entries until a later tick
//
// The configurable wheel (--design wheel:SPEC) is not a row: it is two
// queues (cascading or in place) chosen by its spec at run time, and its
// geometry travels beside the design (design_queues.hpp, Design::wheel).
#pragma once

// clang-format off
#define TIMERSIM_DESIGNS(ROW)                                                                                          \
    ROW(classic, "classic", ClassicWheel, "", "cascading wheel, Linux <= 4.7", false, false)                           \
    ROW(modern, "modern", ModernWheel, "", "expire-in-place wheel, Linux 4.8-6.8 (6.1)", false, false)                 \
    ROW(modern_6_9, "modern-6.9", Modern69Wheel, "",                                                                   \
        "expire-in-place wheel, Linux 6.9+: local, global and deferrable bases", false, false)                         \
    ROW(heap, "heap", HeapQueue, "scheme3", "exact binary heap (Varghese-Lauck scheme 3)", false, false)               \
    ROW(scheme1, "scheme1", Scheme1Queue, "unsorted-list",                                                             \
        "Varghese-Lauck 1: unsorted list, per-tick decrement", true, false)                                            \
    ROW(scheme2, "scheme2", Scheme2Queue, "ordered-list", "Varghese-Lauck 2: ordered list", true, false)               \
    ROW(scheme4, "scheme4", Scheme4Queue, "simple-wheel",                                                              \
        "Varghese-Lauck 4: simple wheel + overflow list", true, false)                                                 \
    ROW(scheme5, "scheme5", Scheme5Queue, "hashed-sorted",                                                             \
        "Varghese-Lauck 5: hashed wheel, sorted slots", true, false)                                                   \
    ROW(scheme6, "scheme6", Scheme6Queue, "hashed-unsorted",                                                           \
        "Varghese-Lauck 6: hashed wheel, unsorted slots, rounds", true, false)                                         \
    ROW(netty, "netty", NettyWheel, "hashed-wheel-timer",                                                              \
        "Netty HashedWheelTimer: 512-tick ring, rounds, deferred cancel", true, true)                                  \
    ROW(cog, "cog", CogWheel, "", "cog: base-64 cascading rings, block buckets, tombstone cancel", true, true)
// clang-format on
