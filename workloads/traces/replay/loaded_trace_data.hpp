// LoadedTrace::Data: a trace as load_trace() holds it in memory (its events
// as 32-byte StoredEvents in chunks, the timers' names and labels, what the
// load measured), written by the loader (trace_load.cpp) and read by the
// replay (trace_replay.cpp). Internal to workloads/traces.
#pragma once

#include "wheel/core/timer_pool.hpp"
#include "workloads/traces/kernel/kernel_fire_index.hpp"
#include "workloads/traces/kernel/recorded_machine.hpp"
#include "workloads/traces/kernel/trace_costs.hpp"
#include "workloads/traces/layouts/trace_event.hpp"
#include "workloads/traces/layouts/trace_filter.hpp"
#include "workloads/traces/replay/trace_replay.hpp"

#include <cstddef>
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace timersim {

class SharedPasses; // shared_pass.hpp

namespace trace_store {

constexpr std::uint32_t kNone = 0xFFFFFFFFu;
constexpr std::uint32_t kNoCpu = 0xFFFFFFFFu;

// One event as a LoadedTrace keeps it: what a replay needs, 32 bytes.
struct StoredEvent {
    std::uint64_t time_ns = 0;
    std::uint64_t value = 0;       // expiry value (see ExpiryForm)
    std::uint32_t timer = 0;       // dense trace id
    std::uint32_t cpu = kNoCpu;
    std::uint32_t cb = kNone;      // cb=: dense id of the timer whose callback made it
    TraceEventKind kind = TraceEventKind::arm;
    ExpiryForm form = ExpiryForm::none;
    bool pinned = false;
    bool deferrable = false;
};
static_assert(sizeof(StoredEvent) == 32);

// What a replay keeps of a TraceEvent (its labels and names are kept apart,
// by timer).
inline StoredEvent stored_event(const TraceEvent& e) noexcept {
    StoredEvent s;
    s.time_ns = e.time_ns;
    s.value = e.expiry_value;
    s.timer = e.timer;
    s.kind = e.kind;
    s.form = e.expiry;
    s.pinned = e.flags.pinned;
    s.deferrable = e.flags.deferrable;
    if (e.cpu) s.cpu = *e.cpu;
    if (e.cb) s.cb = *e.cb;
    return s;
}

} // namespace trace_store

// Events in chunks of 8Ki (256 KiB): growing never copies what was read, and
// at most one chunk is partly empty. Past the first 2 MiB, chunks come eight
// at a time from a 2 MiB block marked for huge pages (wheel/core/timer_pool.hpp's
// PoolAllocator): loading a large trace wrote every event into a page never
// touched before, and with 4 KiB pages those page faults were about a tenth
// of a replay's time (4M events, 128 MiB: 32K faults; 64 with huge pages).
struct LoadedTrace::Data {
    static constexpr unsigned kChunkShift = 13;
    static constexpr std::size_t kChunk = std::size_t{1} << kChunkShift;

    std::string file;
    TraceKind kind = TraceKind::timersim;
    TraceSummary summary;
    std::uint64_t skipped_lines = 0;
    // Each event whose cpu= is higher than every one before it, with its
    // line: the first event on a CPU >= N is the first of these with cpu >=
    // N, so a replay on N CPUs can name its line.
    std::vector<std::pair<std::uint32_t, std::uint64_t>> cpu_firsts;
    std::vector<trace_store::StoredEvent*> chunks; // into blocks
    std::size_t count = 0; // events in the trace, kept or not
    // Events past TraceLoadOptions::max_event_bytes are not kept: the
    // chunks are let go, and each replay reads the events again through
    // this (event_cursor.hpp). Empty while they are kept.
    TraceReopener reopen;
    bool events_kept() const noexcept { return !reopen; }
    // With reopen: the passes the replays share (shared_pass.hpp).
    std::shared_ptr<SharedPasses> passes;
    TraceFilter filter;
    TraceFilterCounts filter_counts;
    // --costs-from-trace: the costs, and each timer's callback cost (by
    // dense id: the p50 of its function's callbacks).
    std::optional<TraceCosts> costs;
    std::vector<std::uint64_t> callback_cost_ns;
    // By dense id: the timer's key as the trace writes it, and the label of
    // its first event that has one (the event log's name and label).
    std::vector<std::string> names;
    std::vector<std::string> labels;
    // A kernel trace: its timer_expire_entry lines (all of them,
    // unfiltered) by the replay's timer ids, which each replay's FireTally
    // matches its fires against, with their callbacks' lengths
    // (ReplayCallbackCosts::as_recorded); the fires themselves are let go
    // once the load has built this and the recorded machine. And the dense
    // id of each timer pointer a kept event names.
    std::shared_ptr<const KernelFireIndex> fire_index;
    std::string unmodelled_kernel;             // FireAgreement::unmodelled_kernel
    bool kernel_6_9 = false;                   // a 6.9+ kernel's trace (timer_start prints bucket_expiry=)
    std::string remote_inference;              // FireAgreement::remote_inference
    std::string lost_history_unclassed;        // FireAgreement::lost_history_unclassed
    std::shared_ptr<const RecordedMachine> recorded; // from kernel_fires
    std::unordered_map<std::uint64_t, std::uint32_t> id_by_pointer;

    // `done` (by id, while loading: kNamed, kLabelled) answers "already
    // set?" from one byte per timer: names and labels take 32 bytes each,
    // and looking at them for every event was a cache miss per event at
    // 100K timers (15 % of a replay's time). Ids can come out of order (a
    // cb= interns its timer first), so this is not "id >= names.size()".
    static constexpr std::uint8_t kNamed = 1, kLabelled = 2;
    void name(std::uint32_t id, const TimerKey& key, std::string_view label, std::vector<std::uint8_t>& done) {
        if (id >= names.size()) {
            names.resize(std::size_t{id} + 1);
            labels.resize(std::size_t{id} + 1);
            done.resize(std::size_t{id} + 1, 0);
        }
        std::uint8_t& d = done[id];
        if (!(d & kNamed)) {
            names[id] = key.symbolic ? std::string(key.token) : std::to_string(key.number);
            d |= kNamed;
        }
        if (!label.empty() && !(d & kLabelled)) {
            labels[id] = std::string(label);
            d |= kLabelled;
        }
    }

    // Each timer's label (its first label=, for ftrace the callback), by
    // dense id, as an index into label_names; kNone: none.
    std::vector<std::uint32_t> label_of;
    std::vector<std::string> label_names;

    void note_label(std::uint32_t timer, std::string_view label,
                    std::unordered_map<std::string, std::uint32_t>& index) {
        if (timer >= label_of.size()) label_of.resize(std::size_t{timer} + 1, trace_store::kNone);
        if (label_of[timer] != trace_store::kNone) return;
        const auto [it, added] = index.try_emplace(std::string(label), static_cast<std::uint32_t>(label_names.size()));
        if (added) label_names.emplace_back(label);
        label_of[timer] = it->second;
    }

    // Lets the kept events go (the chunks and their blocks).
    void drop_events() {
        chunks = {};
        for (const Block& b : blocks.list) ChunkAllocator{}.deallocate(b.events, b.chunks * kChunk);
        blocks.list = {};
    }

    void push(const trace_store::StoredEvent& e) {
        if ((count & (kChunk - 1)) == 0) add_chunk();
        chunks.back()[count & (kChunk - 1)] = e;
        ++count;
    }
    const trace_store::StoredEvent& at(std::size_t i) const { return chunks[i >> kChunkShift][i & (kChunk - 1)]; }
    // Where the chunks live: one chunk each for the first kChunksPerBlock,
    // then blocks of kChunksPerBlock chunks (2 MiB, huge pages).
    using ChunkAllocator = PoolAllocator<trace_store::StoredEvent>;
    static constexpr std::size_t kChunksPerBlock = ChunkAllocator::kHugePage / (kChunk * sizeof(trace_store::StoredEvent));
    struct Block {
        trace_store::StoredEvent* events;
        std::size_t chunks;
    };
    struct Blocks {
        std::vector<Block> list;
        Blocks() = default;
        Blocks(const Blocks&) = delete;
        Blocks& operator=(const Blocks&) = delete;
        ~Blocks() {
            for (const Block& b : list) ChunkAllocator{}.deallocate(b.events, b.chunks * kChunk);
        }
    } blocks;
    // Chunk k is the whole of its own block for k < kChunksPerBlock, then
    // chunk k % kChunksPerBlock of a shared one: where it goes follows from k.
    void add_chunk() {
        const std::size_t k = chunks.size();
        chunks.reserve(k + 1); // before allocating: nothing to undo if it throws
        const bool single = k < kChunksPerBlock;
        if (single || k % kChunksPerBlock == 0) {
            const std::size_t n = single ? 1 : kChunksPerBlock;
            blocks.list.reserve(blocks.list.size() + 1);
            blocks.list.push_back(Block{ChunkAllocator{}.allocate(n * kChunk), n});
        }
        chunks.push_back(blocks.list.back().events + (single ? 0 : k % kChunksPerBlock) * kChunk);
    }

    std::uint64_t line_of_first_on_cpu_at_least(std::uint32_t cpu) const {
        for (const auto& [c, line] : cpu_firsts)
            if (c >= cpu) return line;
        return 0;
    }
};

} // namespace timersim
