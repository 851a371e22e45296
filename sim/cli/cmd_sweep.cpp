// `timersim sweep`: runs a grid of cells (sim/sweep/sweep_grid.hpp), each a
// `timersim run` of one design, HZ, workload, parameter values and seed,
// on --jobs threads; one JSON line per cell (sim/sweep/sweep_results.hpp) in
// DIR/cells/ID.json, written atomically, and DIR/results.csv over the grid.
// A cell already in DIR is not run again, so a stopped sweep resumes. For
// more machines, --emit-jobs writes one command per cell that GNU parallel
// runs as it is (each prints its cell line), and --merge joins what they
// printed into a DIR like the local one, byte for byte.
#include "sim/report/atomic_file.hpp"
#include "sim/sweep/results_dir.hpp"
#include "sim/cli/cli.hpp"
#include "sim/cli/commands.hpp"
#include "sim/cli/common_options.hpp"
#include "sim/cli/design_option.hpp"
#include "sim/cli/machine_options.hpp"
#include "sim/cli/plot_runner.hpp"
#include "sim/cli/progress.hpp"
#include "sim/cli/workload_options.hpp"

#include <fmt/core.h>

#include <filesystem>
#include <thread>

namespace timersim::cli {

namespace po = boost::program_options;
namespace fs = std::filesystem;
using namespace sweep;

namespace {

constexpr double kCellDefaultSeconds = 10;

// A cell made ready to run: what `timersim run` does with the same options.
struct PreparedCell {
    Design design;
    RunPlan plan;
};

PreparedCell prepare(const Cell& cell) {
    try {
        po::options_description options;
        options.add_options()("design", po::value<std::string>()->required(), "");
        add_machine_options(options, kCellDefaultSeconds);
        add_workload_options(options);
        const auto vm = parse_command_line(cell.args, options, {"timersim sweep --cell LINE", "", ""});
        if (!vm) throw UsageError("--help is not a run option of a cell"); // parse_command_line printed the help
        const unsigned hz = hz_option(*vm);
        MachineConfig machine = machine_config(*vm, hz);
        const DesignChoice d = design_choice((*vm)["design"].as<std::string>(), {}, hz);
        machine.wheel = d.wheel;
        return {d.design, planned_run(*vm, std::move(machine), hz, kCellDefaultSeconds).plan};
    } catch (const UsageError& e) {
        throw UsageError(fmt::format("cell '{}': {}", cell.line, e.what()));
    }
}

std::string run_cell(const Cell& cell) {
    const PreparedCell p = prepare(cell);
    return cell_json(cell, run_machine(p.design, p.plan.machine, p.plan.workload));
}

// results.csv, and the Pareto charts when asked.
void finish(const std::string& dir, std::vector<CellRecord> records, bool plot) {
    const std::string csv = write_results_csv(dir, std::move(records));
    if (plot) run_plot_script("timersim-plot-sweep", {"--out", dir, csv});
}

std::string self_path() {
    std::error_code ec;
    const auto exe = fs::read_symlink("/proc/self/exe", ec);
    return ec ? std::string("timersim") : exe.string();
}

Grid grid_from_options(const po::variables_map& vm) {
    Grid g = vm.count("grid") ? parse_grid_file(vm["grid"].as<std::string>()) : Grid{};
    for (const char* key : {"design", "hz", "workload", "seed", "duration"})
        if (vm.count(key)) apply_grid_key(g, key, vm[key].as<std::string>(), fmt::format("--{}", key));
    for (const char* key : {"param", "set"})
        if (vm.count(key))
            for (const std::string& v : vm[key].as<std::vector<std::string>>())
                apply_grid_key(g, key, v, fmt::format("--{}", key));
    return g;
}

int sweep_command(std::span<const std::string> args) {
    po::options_description options("Options");
    options.add_options()
        ("grid", po::value<std::string>(), "read the grid from FILE (KEY = VALUE lines; the options below override it)")
        ("design", po::value<std::string>(), fmt::format("designs, comma-separated: {} (default: classic,modern,heap)", design_names()).c_str())
        ("hz", po::value<std::string>(), "HZ values, comma-separated (default: 250)")
        ("workload", po::value<std::string>(), "workloads, comma-separated; '+' runs generators together (default: tcp-retransmit+socket-timeouts)")
        ("seed", po::value<std::string>(), "seeds: a list (1,5,9) or a range (1..10) (default: 1)")
        ("param", po::value<std::vector<std::string>>(), "NAME=V1,V2,...: sweep the run option --NAME over these values (repeatable)")
        ("set", po::value<std::vector<std::string>>(), "NAME=VALUE or NAME: give every cell --NAME VALUE (repeatable)")
        ("duration", po::value<std::string>(), "simulated seconds per cell (default: 10)")
        ("output,o", po::value<std::string>(), "the results directory: DIR/cells/ID.json, DIR/results.csv")
        ("jobs,j", po::value<unsigned>()->default_value(0), "cells run at the same time (0: one per CPU)")
        ("plot", po::bool_switch(), "draw DIR/pareto-WORKLOAD.png: lateness p99 and max against timer CPU time")
        ("emit-jobs", po::value<std::string>(), "write FILE: one command per cell for GNU parallel, instead of running")
        ("merge", po::value<std::vector<std::string>>()->multitoken(), "join cells printed by emitted jobs (FILE) or kept in a results DIR (repeatable), into -o DIR")
        ("cell", po::value<std::string>(), "run one cell (a line of an --emit-jobs file) and print its JSON line");
    const std::string description =
        "Sweep the design space: every combination of designs x HZ x workloads x\n"
        "parameters x seeds is a cell, a `timersim run` with those options (any run\n"
        "option can be swept with --param or fixed with --set). Each cell's result is one\n"
        "JSON line in DIR/cells/ID.json (ID: a hash of the cell's options, written\n"
        "atomically), DIR/results.csv joins them; cells already in DIR are skipped, so an\n"
        "interrupted sweep resumes where it stopped. Results are deterministic: the same\n"
        "grid gives the same bytes for any --jobs.\n\n"
        "Grid file (--grid): one KEY = VALUE per line, '#' comments, the keys are the\n"
        "options design, hz, workload, seed, param, set, duration (param and set repeat).\n\n"
        "Beyond one machine: --emit-jobs FILE writes one shell command per cell; GNU\n"
        "parallel runs the file unchanged, here or over ssh (timersim must be at the same\n"
        "path on every host), each job printing its cell's line:\n"
        "  parallel < FILE > cells.jsonl                        (this machine)\n"
        "  parallel --sshloginfile HOSTS < FILE > cells.jsonl   (several)\n"
        "then --merge cells.jsonl -o DIR writes the same DIR a local sweep writes.\n\n" +
        wheel_spec_help();
    const auto vm = parse_command_line(
        args, options,
        {
            .usage = "timersim sweep [grid options] (-o DIR [--jobs N] [--plot] | --emit-jobs FILE)\n"
                     "       timersim sweep --merge FILE|DIR... -o DIR [--plot]\n"
                     "       timersim sweep --cell LINE",
            .description = description,
            .examples = "timersim sweep --design classic,modern,wheel:rfc-2015 --seed 1..3 -o sweep --plot\n"
                        "timersim sweep --grid grid.ini --param connections=1000,10000 -o sweep -j 2\n"
                        "timersim sweep --grid grid.ini --emit-jobs jobs.txt && parallel < jobs.txt > cells.jsonl\n"
                        "timersim sweep --merge cells.jsonl -o sweep --plot",
        });
    if (!vm) return kExitOk;

    if (vm->count("cell")) {
        for (const char* other : {"grid", "design", "hz", "workload", "seed", "param", "set", "duration", "output",
                                  "emit-jobs", "merge"})
            if (vm->count(other)) throw UsageError(fmt::format("--cell: not with --{}", other));
        fmt::print("{}", run_cell(cell_from_line((*vm)["cell"].as<std::string>())));
        return kExitOk;
    }
    const bool plot = (*vm)["plot"].as<bool>();
    if (vm->count("merge")) {
        if (!vm->count("output")) throw UsageError("--merge: give the results directory with -o DIR");
        const std::string dir = (*vm)["output"].as<std::string>();
        std::vector<CellRecord> records = read_cells((*vm)["merge"].as<std::vector<std::string>>());
        make_dirs(dir);
        for (const CellRecord& r : records) write_file_atomically(cell_path(dir, r.id), r.text);
        fmt::print(stderr, "timersim sweep: {} cells merged into {}\n", records.size(), dir);
        finish(dir, std::move(records), plot);
        return kExitOk;
    }

    const Grid grid = grid_from_options(*vm);
    const std::vector<Cell> cells = expand(grid);
    for (const Cell& c : cells) prepare(c); // every cell's options checked before anything runs
    if (vm->count("emit-jobs")) {
        // No results are made here to plot: the merge that gathers them does.
        if (plot) throw UsageError("--plot: not with --emit-jobs (plot when merging: sweep --merge FILE -o DIR --plot)");
        std::string jobs_text;
        const std::string self = self_path();
        for (const Cell& c : cells) jobs_text += fmt::format("'{}' sweep --cell '{}'\n", self, c.line);
        write_file_atomically((*vm)["emit-jobs"].as<std::string>(), jobs_text);
        fmt::print(stderr, "timersim sweep: {} jobs written to {}\n", cells.size(), (*vm)["emit-jobs"].as<std::string>());
        return kExitOk;
    }
    if (!vm->count("output")) throw UsageError("give the results directory with -o DIR (or --emit-jobs FILE)");
    const std::string dir = (*vm)["output"].as<std::string>();
    unsigned jobs = (*vm)["jobs"].as<unsigned>();
    if (jobs > 1024) throw UsageError(fmt::format("--jobs: must be 0..1024, got {}", jobs));
    if (jobs == 0) jobs = std::max(1u, std::thread::hardware_concurrency());
    make_dirs(dir);

    std::vector<const Cell*> todo;
    for (const Cell& c : cells)
        if (!done_cell(dir, c)) todo.push_back(&c);
    const unsigned threads = std::min<unsigned>(jobs, static_cast<unsigned>(std::max<std::size_t>(todo.size(), 1)));
    fmt::print(stderr, "timersim sweep: {} cells, {} already in {}, {} to run on {} thread{}\n", cells.size(),
               cells.size() - todo.size(), dir, todo.size(), threads, threads == 1 ? "" : "s");
    {
        ProgressBar bar("sweep");
        run_cells(todo, dir, threads, run_cell, [&](double f) { bar.update(f); });
    }
    std::vector<CellRecord> records;
    for (const Cell& c : cells) records.push_back(*done_cell(dir, c));
    finish(dir, std::move(records), plot);
    return kExitOk;
}

} // namespace

int run_sweep(std::span<const std::string> args) {
    try {
        return sweep_command(args);
    } catch (const GridError& e) {
        throw UsageError(e.what()); // a grid or cell line is the user's options
    }
}

} // namespace timersim::cli
