// One pass over a trace's input for the replays that read it at the same
// time: compare's designs on their threads each used to read (and parse)
// the whole input again when the load had not kept its events; now the
// replays running together read one pass, in chunks, whoever needs the next
// chunk first parsing it.
//
//   SharedPasses passes;                    // one per loaded trace
//   SharedPass::Reader r = passes.join(reopen, count, file);
//   const auto chunk = r.chunk(0);          // events 0 .. kChunk-1
//   r.release(1);                           // done with chunk 0
//
// Memory stays bounded: a chunk is let go once every reader has passed it
// (the first kKept chunks stay until the pass reads more, for replays that
// start a little late), and a reader kMaxAhead chunks ahead of the slowest
// waits for it. A replay that starts while the pass still has its first
// chunk joins it; one that starts later (designs run one after another, or
// more designs than threads) starts a pass of its own. Each reader must be used from one thread, and a thread must not
// hold two readers of one pass (the one ahead would wait for the other).
// Internal to workloads/traces.
#pragma once

#include "workloads/traces/replay/loaded_trace_data.hpp"
#include "workloads/traces/replay/trace_source.hpp"

#include <condition_variable>
#include <cstddef>
#include <cstdint>
#include <exception>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

namespace timersim {

class SharedPass {
public:
    static constexpr std::size_t kChunk = 4096; // events a chunk (128 KiB)
    static constexpr std::size_t kMaxAhead = 32; // chunks a reader may be ahead of the slowest
    static constexpr std::size_t kKept = 16;     // chunks kept from the first while readers may join late
    using Chunk = std::vector<trace_store::StoredEvent>;

    // `count`: the events the input gives (LoadedTrace::Data::count).
    SharedPass(TraceReopener reopen, std::size_t count, std::string file);

    class Reader {
    public:
        Reader() = default;
        Reader(Reader&& o) noexcept : pass_(std::move(o.pass_)), id_(o.id_) {}
        Reader& operator=(Reader&&) = delete;
        ~Reader();
        // Events [k * kChunk, (k + 1) * kChunk) (the last chunk may be
        // shorter). k at least the lowest chunk this reader still holds
        // (release()). Throws TraceError if the input read again ends early,
        // and what reading it throws.
        std::shared_ptr<const Chunk> chunk(std::size_t k);
        // This reader needs no chunk below k any more.
        void release(std::size_t k);

    private:
        friend class SharedPasses;
        Reader(std::shared_ptr<SharedPass> pass, std::size_t id) : pass_(std::move(pass)), id_(id) {}
        std::shared_ptr<SharedPass> pass_;
        std::size_t id_ = 0;
    };

    // Passes made, and readers that joined one already made (for tests).
    struct Counts {
        std::uint64_t passes = 0;
        std::uint64_t joined = 0;
    };

private:
    friend class SharedPasses;
    std::shared_ptr<const Chunk> chunk(std::size_t reader, std::size_t k);
    void release(std::size_t reader, std::size_t k);
    void leave(std::size_t reader);
    // Lets go of the chunks every reader has passed (lock held).
    void trim();
    std::size_t slowest() const; // the lowest chunk a reader holds (lock held)

    std::mutex mutex_;
    std::condition_variable changed_;
    TraceReopener reopen_;
    std::unique_ptr<TraceSource> source_; // opened by the first chunk's reader
    std::size_t count_;
    std::string file_;
    std::vector<std::shared_ptr<const Chunk>> chunks_; // chunks_[k - first_]
    std::size_t first_ = 0;   // the oldest chunk kept
    bool reading_ = false;    // a reader is parsing the next chunk (outside the lock)
    std::exception_ptr failed_; // what reading the input threw: every reader gets it
    std::vector<std::size_t> lowest_; // by reader: the lowest chunk it holds, or kLeft
    static constexpr std::size_t kLeft = ~std::size_t{0};
};

// The passes of one loaded trace: join() gives a reader of the pass under
// way if it still has its first chunk, else of a new one.
class SharedPasses {
public:
    SharedPass::Reader join(const TraceReopener& reopen, std::size_t count, const std::string& file);
    SharedPass::Counts counts() const;

private:
    mutable std::mutex mutex_;
    std::weak_ptr<SharedPass> current_; // the newest pass, while a reader has it
    SharedPass::Counts counts_;
};

} // namespace timersim
