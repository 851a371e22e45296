#include "sim/machine/comparison.hpp"

#include <algorithm>
#include <exception>
#include <mutex>
#include <stdexcept>
#include <string>
#include <thread>

namespace timersim {

namespace {

std::string name_of(const ComparedDesign& d) {
    return d.design == Design::wheel && d.wheel ? to_string(*d.wheel) : std::string(to_string(d.design));
}

} // namespace

Comparison compare_designs(std::span<const Design> designs, const MachineConfig& machine,
                           const WorkloadSpec& workload, const ProgressFn& progress, EventLog* events,
                           unsigned jobs) {
    std::vector<ComparedDesign> compared;
    for (const Design d : designs) compared.push_back({d, std::nullopt});
    return compare_designs(std::span<const ComparedDesign>(compared), machine, workload, progress, events, jobs);
}

Comparison compare_designs(std::span<const ComparedDesign> designs, const MachineConfig& machine,
                           const WorkloadSpec& workload, const ProgressFn& progress, EventLog* events,
                           unsigned jobs) {
    if (designs.empty()) throw std::invalid_argument("no design selected");
    std::vector<std::string> names;
    for (const ComparedDesign& d : designs) {
        names.push_back(name_of(d));
        if (std::find(names.begin(), names.end() - 1, names.back()) != names.end() - 1)
            throw std::invalid_argument("design " + names.back() + " given twice");
    }
    // Each design's machine: the same but for the wheel's geometry.
    std::vector<MachineConfig> machines(designs.size(), machine);
    for (std::size_t i = 0; i < designs.size(); ++i)
        if (designs[i].wheel) machines[i].wheel = designs[i].wheel;
    const std::size_t n = designs.size();
    // The event log is one stream, designs one after the other: no overlap.
    if (events || jobs == 0) jobs = 1;
    jobs = static_cast<unsigned>(std::min<std::size_t>(jobs, n));

    std::vector<RunResult> runs(n);
    std::vector<std::exception_ptr> errors(n);
    std::vector<double> done(n, 0.0);
    std::mutex progress_mutex; // ProgressFn need not be thread-safe
    auto run_one = [&](std::size_t i) {
        ProgressFn step;
        if (progress)
            step = [&, i](double f) {
                const std::lock_guard lock(progress_mutex);
                done[i] = f;
                double sum = 0;
                for (double x : done) sum += x;
                progress(sum / static_cast<double>(n));
            };
        try {
            runs[i] = run_machine(designs[i].design, machines[i], workload, step, events);
        } catch (...) {
            errors[i] = std::current_exception();
        }
    };
    if (jobs == 1) {
        for (std::size_t i = 0; i < n; ++i) {
            run_one(i);
            if (errors[i]) break;
        }
    } else {
        // Each design runs on its own machine and workload instance: nothing
        // is shared but the read-only configuration, so the result does not
        // depend on how the runs are spread over threads.
        std::vector<std::thread> threads;
        std::size_t next = 0;
        std::mutex next_mutex;
        for (unsigned t = 0; t < jobs; ++t)
            threads.emplace_back([&] {
                while (true) {
                    std::size_t i;
                    {
                        const std::lock_guard lock(next_mutex);
                        if (next == n) return;
                        i = next++;
                    }
                    run_one(i);
                }
            });
        for (auto& t : threads) t.join();
    }
    for (const auto& e : errors)
        if (e) std::rethrow_exception(e);
    if (progress) progress(1.0);
    return Comparison{std::move(runs)};
}

} // namespace timersim
