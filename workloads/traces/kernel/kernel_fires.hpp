// What a kernel trace says fired, kept to judge a replay of it: every
// timer_expire_entry as (timer, now, CPU). A replay of the recording
// kernel's own design should fire the same timers on the same jiffies and
// CPUs; how many it does (FireAgreement) tells a reader how far to trust the
// other designs' columns of a comparison on the same trace.
//
//   KernelFireCollector fires(&costs);          // sees the reader's events, passes them on
//   reader.set_observer(&fires);
//   ... read the trace ...
//   KernelFireIndex index(fires.fires(), fires.functions(), id_of); // kernel_fire_index.hpp: what replays match
#pragma once

#include "wheel/core/jiffies.hpp"
#include "workloads/traces/kernel/cancel_meaning.hpp"
#include "workloads/traces/kernel/kernel_clock.hpp"
#include "workloads/traces/kernel/remote_inference.hpp"
#include "workloads/traces/kernel/spilled_chunks.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/workload.hpp"

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

namespace timersim {

inline constexpr std::uint32_t kNoFunction = 0xFFFFFFFFu;

// One timer_expire_entry: the kernel ran `timer`'s callback on `cpu` with
// jiffies at `now`. One is kept for every fire of a kernel trace, for the
// whole replay: its four optional fields share one byte of flags (72 bytes
// a fire; with a std::optional each, 112).
struct KernelFire {
    std::uint64_t timer = 0; // the timer_list pointer as printed
    Jiffies now = 0;
    std::uint64_t entry_ns = 0; // the timer_expire_entry's timestamp
    std::uint32_t cpu = 0;
    std::uint32_t function = kNoFunction; // index in KernelFireCollector::functions()

    // 6.1+: the clock of the bucket it was expired from.
    std::optional<Jiffies> baseclk() const noexcept { return get(kBaseclk, baseclk_); }
    // Its last timer_start's expires, if the trace shows one.
    std::optional<Jiffies> requested() const noexcept { return get(kRequested, requested_); }
    // From its timer_expire_entry to its timer_expire_exit on that CPU: how
    // long the callback took as recorded (a stalled vCPU's time included).
    std::optional<std::uint64_t> callback_ns() const noexcept { return get(kCallback, callback_ns_); }
    // The `now` of the next fire of the same run on this CPU: its next
    // timer_expire_entry after this one's exit, with only timer_cancel lines
    // (the run loop's detach) between, from the same bucket (baseclk) or at
    // most kSameRunGapNs after the exit. Jiffies that moved from `now` to it
    // moved while this callback, or the run right after it, held the CPU.
    std::optional<Jiffies> next_in_run() const noexcept { return get(kNextInRun, next_in_run_); }
    // 6.9+: the idle CPU whose global base this fire's CPU was running for
    // it (after that CPU's tmigr_handle_remote_cpu line in the same TIMER
    // softirq, or as inferred where the trace has no timer_migration events:
    // KernelFireCollector::use_inferred_remote_runs()); none for a CPU's own
    // bases.
    std::optional<std::uint32_t> remote_of() const noexcept {
        return (has_ & kRemoteOf) ? std::optional<std::uint32_t>(remote_of_) : std::nullopt;
    }

    KernelFire& set_baseclk(std::optional<Jiffies> v) noexcept { return set(kBaseclk, baseclk_, v); }
    KernelFire& set_requested(std::optional<Jiffies> v) noexcept { return set(kRequested, requested_, v); }
    KernelFire& set_callback_ns(std::optional<std::uint64_t> v) noexcept { return set(kCallback, callback_ns_, v); }
    KernelFire& set_next_in_run(std::optional<Jiffies> v) noexcept { return set(kNextInRun, next_in_run_, v); }
    KernelFire& set_remote_of(std::uint32_t cpu) noexcept {
        remote_of_ = cpu;
        has_ |= kRemoteOf;
        return *this;
    }

private:
    static constexpr std::uint8_t kBaseclk = 1, kRequested = 2, kCallback = 4, kNextInRun = 8, kRemoteOf = 16;
    std::optional<std::uint64_t> get(std::uint8_t bit, std::uint64_t v) const noexcept {
        return (has_ & bit) ? std::optional<std::uint64_t>(v) : std::nullopt;
    }
    KernelFire& set(std::uint8_t bit, std::uint64_t& field, std::optional<std::uint64_t> v) noexcept {
        field = v.value_or(0);
        has_ = static_cast<std::uint8_t>(v ? has_ | bit : has_ & ~bit);
        return *this;
    }
    std::uint64_t baseclk_ = 0, requested_ = 0, callback_ns_ = 0, next_in_run_ = 0;

public:
    bool deferrable = false; // its last timer_start said TIMER_DEFERRABLE
    // Fired on another CPU than the one whose base its last timer_start
    // queued it on (cpu=): 6.9+ timer_expire_remote(), a migrator running an
    // idle CPU's global base (before 6.9 a timer fires on its base's CPU).
    bool remote = false;

private:
    std::uint8_t has_ = 0;
    std::uint32_t remote_of_ = 0;
};
static_assert(sizeof(KernelFire) == 72);
// A trace's fires in the order read, in chunks of 2^17 (9 MiB); past two
// chunks, the older ones go to a temporary file once the collector is done
// with them (spilled_chunks.hpp, KernelFireCollector::spill_to_file()), so
// a long trace's load holds four chunks of them at most (the two kept, the
// one being filled, and one being read back).
using KernelFires = SpilledChunks<KernelFire>;
// A line saying a CPU lost events (lost_marker_of()), where the trace
// stood: the latest jiffies it had shown (none: none yet) and how many fires
// came before the line. Where validate's replay does not class the lost
// history (lost_history.hpp), KernelFireIndex makes it of them.
struct KernelLostLine {
    std::uint32_t cpu = 0;
    std::optional<Jiffies> latest;
    std::uint64_t fires_before = 0;
};
inline constexpr std::uint64_t kSameRunGapNs = 100'000;

// A non-deferrable timer the kernel took off its CPU's wheel without
// firing it (del_timer(), or mod_timer() moving it): queued on `cpu` to be
// collected at `bucket_expiry` (6.1 calc_index(), from its timer_start's
// idx=; 6.8+ prints it), cancelled at trace time `cancel_ns`. Cancelled
// after its bucket's jiffy, it shows the CPU ran no TIMER_SOFTIRQ from that
// jiffy on: the run would have fired it (6.1 __run_timers()).
struct KernelUnfired {
    std::uint32_t cpu = 0;
    Jiffies bucket_expiry = 0;
    std::uint64_t cancel_ns = 0;
};
// The jiffy `u` was cancelled at, if it proves the CPU held its runs from
// u.bucket_expiry on: a cancel in the bucket's own jiffy proves nothing, as
// it may have come before that jiffy's run would have.
inline std::optional<Jiffies> unfired_holds_from(const KernelUnfired& u, const KernelClock& clock) noexcept {
    const Jiffies cancelled = clock.jiffies_at(u.cancel_ns);
    if (!time_after(cancelled, u.bucket_expiry)) return std::nullopt;
    return cancelled;
}

// A remote expiry run as a 6.9+ trace shows it: in its TIMER softirq,
// CPU `migrator` printed "tmigr_handle_remote_cpu: cpu=N" just before it
// ran idle CPU N's global base (6.9 tmigr_handle_remote_cpu() ->
// timer_expire_remote()). Machine evidence, whatever it then fired: the
// jiffy is the `now=` of the next timer_expire_entry of that softirq on the
// migrator, if any, else to be read off the clock at `softirq_ns` (its
// softirq_entry's timestamp).
struct KernelRemoteRun {
    std::uint32_t migrator = 0;
    std::uint32_t cpu = 0;
    std::uint64_t softirq_ns = 0;
    std::optional<Jiffies> now;
};

// Collects the fires (every timer_expire_entry the reader reads, before
// any filter) and the unfired cancels.
class KernelFireCollector final : public FtraceObserver {
public:
    void timer_event(const FtraceEvent& event) override;
    void timer_softirq(const FtraceTimerSoftirq& event) override;
    void other_line(std::uint64_t line, std::string_view text) override;
    const KernelFires& fires() const noexcept { return fires_; }
    // Once the trace is read: the fires, moved out (a copy would double the
    // largest thing a long trace's load holds).
    KernelFires take_fires() noexcept { return std::move(fires_); }
    // Lets the fires it no longer changes go to a temporary file (named
    // after input `name` in an error) past `resident` chunks of 2^`shift`;
    // without it they all stay in memory. Call before the first event.
    void spill_to_file(std::string name, unsigned shift = KernelFires::kDefaultShift,
                       std::size_t resident = KernelFires::kDefaultResident) {
        spill_name_ = std::move(name);
        fires_ = KernelFires::with_chunks(shift, resident);
        spill_chunk_ = std::size_t{1} << shift;
    }
    // The remote expiry runs (6.9+ with the timer_migration events), in
    // trace order.
    const std::vector<KernelRemoteRun>& remote_runs() const noexcept { return remote_runs_; }
    // Did the trace have any timer_migration (tmigr_*) event?
    bool saw_timer_migration() const noexcept { return timer_migration_; }
    // For a 6.9+ trace without them, once it is read and before
    // take_fires(): the remote runs and the fires' remote_of become those
    // inferred from the fires of another CPU's global timers
    // (remote_inference.hpp), as tmigr_handle_remote_cpu lines would have
    // made them. Returns how many fires were inferred remote.
    std::uint64_t use_inferred_remote_runs();
    // The lines saying a CPU lost events, in trace order, of the trace's
    // CPUs as validate counts them (those its timer events name as [CPU]
    // or cpu=): a line naming another, or a CPU no kernel can have
    // (kMaxKernelCpus or more), is no such line.
    std::vector<KernelLostLine> lost_lines() const;
    // Does the trace give validate's model cause to find lost history
    // (lost_history.hpp)? A line saying a CPU lost events, or a sequence
    // that may be one the kernel cannot print, read from the trace alone
    // with validate's rules for what leaves a timer pending (its
    // SequenceState): a timer_start (with cpu=, idx= and its jiffies) of a
    // timer started since its last timer_init, applied cancel or expiry with
    // now= and baseclk= (validate's start of a pending timer), or such an
    // expiry of a timer known (a timer_init or start seen) but not started
    // since (its expiry of a timer never pending). A cancel is applied
    // unless its timer's next event makes it the detach (detaches_for()).
    // Validate's model loses a CPU's history only at such a line or
    // sequence, so a trace without one has none. (Its next event of any
    // kind settles a cancel, a timer_expire_exit too, as validate's stream
    // reads it.)
    bool history_in_doubt() const noexcept { return doubt_ || !lost_lines_.empty(); }
    // The callbacks' function= names, by KernelFire::function.
    const std::vector<std::string>& functions() const noexcept { return functions_; }
    // Once the whole trace is read: a cancel is known not to be an
    // expiry's detach when the timer's next event is not its expire_entry.
    std::vector<KernelUnfired> unfired() const;
    // With the kernel's clock (kernel_clock.hpp; it must outlive the
    // collector), an unfired cancel that came by its bucket's own jiffy
    // proves nothing (RecordedMachine::from() skips it) and is not kept:
    // most del_timer()s come before their timer is due, and a long trace's
    // unfired list would grow with them.
    void use_clock(const KernelClock* clock) noexcept { clock_ = clock; }

private:
    void note_unfired(const FtraceEvent& e);
    void note_next_in_run(const FtraceEvent& e);
    struct SequenceState;
    void note_sequence(const FtraceEvent& e, SequenceState& s);
    void add_fire(const KernelFire& f);

    KernelFires fires_;
    std::string spill_name_; // spill_to_file()
    std::size_t spill_chunk_ = 0;
    std::vector<std::string> functions_;
    struct NameHash { // lookups by the line's string_view, no copy
        using is_transparent = void;
        std::size_t operator()(std::string_view s) const noexcept { return std::hash<std::string_view>{}(s); }
    };
    std::unordered_map<std::string, std::uint32_t, NameHash, std::equal_to<>> function_ids_;
    std::vector<KernelLostLine> lost_lines_;
    // What a timer pointer's events showed so far: its last timer_start,
    // and for history_in_doubt() (not kept up once in doubt) whether it is
    // known to validate and pending there as far as the trace shows, and
    // its cancel until its next event says whether it was a detach. One
    // table for both: a start and an expiry look it up once.
    struct SequenceState {
        enum class Timer : std::uint8_t { unseen, known_idle, started } timer = Timer::unseen;
        bool cancel_open = false;
        std::uint32_t cancel_cpu = 0; // the open cancel's, as CancelNeighbour has them
        std::uint64_t cancel_ns = 0;
    };
    struct TimerSeen {
        bool started = false; // a timer_start seen: the fields below are its
        bool deferrable = false;
        std::optional<std::uint32_t> cpu; // the base it was queued on
        Jiffies expires = 0;
        SequenceState sequence;
    };
    std::unordered_map<std::uint64_t, TimerSeen> timers_; // by timer pointer
    bool doubt_ = false;
    std::uint32_t trace_cpus_ = 1; // trace_cpus_with(), as validate counts them
    std::optional<Jiffies> latest_jiffies_; // the most the trace showed so far
    struct Open {
        std::size_t fire = 0; // index in fires_
        std::uint64_t entry_ns = 0;
    };
    std::unordered_map<std::uint32_t, Open> open_; // by CPU: the callback running there
    struct Exited {
        std::size_t fire = 0; // index in fires_
        std::uint64_t exit_ns = 0;
    };
    std::unordered_map<std::uint32_t, Exited> exited_; // by CPU: the fire whose exit came last there
    // By timer pointer: where its last timer_start queued it (non-deferrable,
    // on a 4.8+ wheel), while pending; and its cancel, until its next event
    // tells whether that cancel was an expiry's detach.
    std::unordered_map<std::uint64_t, KernelUnfired> queued_;
    // By timer: its cancel (and the CPU that printed it) awaiting the
    // timer's next event, which says whether it was a detach.
    std::unordered_map<std::uint64_t, std::pair<KernelUnfired, CancelNeighbour>> cancelled_;
    std::vector<KernelUnfired> unfired_;
    const KernelClock* clock_ = nullptr;
    bool may_prove_hold(const KernelUnfired& u) const noexcept { return !clock_ || unfired_holds_from(u, *clock_); }
    std::vector<KernelRemoteRun> remote_runs_;
    // By CPU: its TIMER softirq's softirq_entry timestamp, and its remote
    // runs whose jiffy is not known yet (indices in remote_runs_).
    std::unordered_map<std::uint32_t, std::uint64_t> softirq_entry_ns_;
    std::unordered_map<std::uint32_t, std::vector<std::size_t>> remote_open_;
    // By CPU: the idle CPU whose global base it is running in its TIMER
    // softirq now (its last tmigr_handle_remote_cpu line there).
    std::unordered_map<std::uint32_t, std::uint32_t> running_remote_;
    // The same inferred from the timer events, used only for a trace
    // without timer_migration events (use_inferred_remote_runs()).
    bool timer_migration_ = false;
    RemoteExpiryInference inference_;
    std::vector<std::pair<std::size_t, std::uint32_t>> inferred_fires_; // fire index, the idle CPU
    std::vector<KernelRemoteRun> inferred_runs_;
};

} // namespace timersim
