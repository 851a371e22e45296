#include "workloads/generators/composite_workload.hpp"

#include <stdexcept>

namespace timersim {

namespace {

constexpr unsigned kPartShift = 56;

// Which part owns timer ids [first, end).
struct OwnedRange {
    TimerId first;
    TimerId end;
    std::uint8_t part;
};

// The machine as one part sees it.
class PartSim final : public Sim {
public:
    PartSim(Sim& base, std::uint8_t part, std::vector<OwnedRange>& ranges) : base_(&base), part_(part), ranges_(ranges) {}

    void rebind(Sim& base) noexcept { base_ = &base; }

    std::uint64_t now_ns() const override { return base_->now_ns(); }
    Jiffies jiffies() const override { return base_->jiffies(); }
    Jiffies start_jiffies() const override { return base_->start_jiffies(); }
    unsigned hz() const override { return base_->hz(); }
    unsigned cpus() const override { return base_->cpus(); }
    unsigned current_cpu() const override { return base_->current_cpu(); }
    std::uint64_t next_tick_ns() const override { return base_->next_tick_ns(); }
    TimerId create_timer(TimerFlags flags = {}) override {
        const TimerId id = base_->create_timer(flags);
        if (!ranges_.empty() && ranges_.back().part == part_ && ranges_.back().end == id)
            ++ranges_.back().end;
        else
            ranges_.push_back(OwnedRange{id, id + 1, part_});
        return id;
    }
    void label_timer(TimerId id, std::string_view label) override { base_->label_timer(id, label); }
    void reserve_timers(std::size_t n) override { base_->reserve_timers(n); }
    ArmOutcome arm(TimerId id, Jiffies expires, ArmCall call = ArmCall::mod_timer) override {
        return base_->arm(id, expires, call);
    }
    ArmOutcome arm_on(TimerId id, Jiffies expires, unsigned cpu,
                      ArmCall call = ArmCall::mod_timer_pinned) override {
        return base_->arm_on(id, expires, cpu, call);
    }
    bool cancel(TimerId id) override { return base_->cancel(id); }
    void prefetch_timer(TimerId id) override { base_->prefetch_timer(id); }
    void schedule_action(std::uint64_t time_ns, const Action& action) override {
        Action routed = action;
        if (routed.kind == Action::Kind::call) {
            if (routed.tag >> kPartShift) throw std::logic_error("composite workload: a part used the top 8 tag bits");
            routed.tag |= std::uint64_t{part_} << kPartShift;
        }
        base_->schedule_action(time_ns, routed);
    }

private:
    Sim* base_;
    std::uint8_t part_;
    std::vector<OwnedRange>& ranges_;
};

class Composite final : public Workload {
public:
    Composite(const std::vector<WorkloadFactory>& factories, Sim& sim) {
        if (factories.size() > kMaxWorkloadParts) throw std::invalid_argument("at most 255 workload parts");
        parts_.reserve(factories.size());
        for (std::size_t p = 0; p < factories.size(); ++p) {
            auto part = std::make_unique<Part>(sim, static_cast<std::uint8_t>(p), ranges_);
            part->workload = factories[p](part->sim);
            parts_.push_back(std::move(part));
        }
    }

    void on_action(Sim& sim, std::uint64_t tag) override {
        Part& part = *parts_.at(tag >> kPartShift);
        part.sim.rebind(sim);
        part.workload->on_action(part.sim, tag & ((std::uint64_t{1} << kPartShift) - 1));
    }

    void prefetch_action(Sim& sim, std::uint64_t tag) override {
        const std::size_t p = tag >> kPartShift;
        if (p >= parts_.size()) return;
        Part& part = *parts_[p];
        part.sim.rebind(sim);
        part.workload->prefetch_action(part.sim, tag & ((std::uint64_t{1} << kPartShift) - 1));
    }

    void on_fire(Sim& sim, const FireRecord& fired) override {
        for (const OwnedRange& r : ranges_) {
            if (fired.id >= r.first && fired.id < r.end) {
                Part& part = *parts_[r.part];
                part.sim.rebind(sim);
                part.workload->on_fire(part.sim, fired);
                return;
            }
        }
    }

private:
    struct Part {
        Part(Sim& base, std::uint8_t index, std::vector<OwnedRange>& ranges) : sim(base, index, ranges) {}
        PartSim sim;
        std::unique_ptr<Workload> workload;
    };

    std::vector<OwnedRange> ranges_;
    std::vector<std::unique_ptr<Part>> parts_;
};

} // namespace

WorkloadFactory composite_workload(std::vector<WorkloadFactory> parts) {
    return [parts = std::move(parts)](Sim& sim) -> std::unique_ptr<Workload> {
        return std::make_unique<Composite>(parts, sim);
    };
}

} // namespace timersim
