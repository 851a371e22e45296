#include "sim/sweep/results_dir.hpp"

#include "sim/report/atomic_file.hpp"
#include "workloads/traces/input/input_file.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <exception>
#include <filesystem>
#include <fstream>
#include <map>
#include <mutex>
#include <stdexcept>
#include <thread>

namespace timersim::sweep {

namespace fs = std::filesystem;

std::string cell_path(const std::string& dir, const std::string& id) {
    return (fs::path(dir) / "cells" / (id + ".json")).string();
}

std::optional<CellRecord> done_cell(const std::string& dir, const Cell& cell) {
    std::ifstream in(cell_path(dir, cell.id));
    if (!in) return std::nullopt;
    std::string line;
    std::getline(in, line);
    try {
        CellRecord rec = parse_cell_record(line);
        if (rec.args == cell.line) return rec;
    } catch (const std::invalid_argument&) {
    }
    return std::nullopt; // damaged or another cell's: run it again
}

void make_dirs(const std::string& dir) {
    std::error_code ec;
    fs::create_directories(fs::path(dir) / "cells", ec);
    if (ec) throw OutputError(fmt::format("{}: cannot create directory ({})", dir, ec.message()));
}

std::string write_results_csv(const std::string& dir, std::vector<CellRecord> records) {
    const std::string csv = (fs::path(dir) / "results.csv").string();
    write_file_atomically(csv, results_csv(std::move(records)));
    return csv;
}

void run_cells(const std::vector<const Cell*>& todo, const std::string& dir, unsigned jobs, const CellRunner& run_cell,
               const std::function<void(double)>& progress) {
    std::atomic<std::size_t> next{0};
    std::size_t done = 0;
    std::mutex mutex; // the files, the progress, the first error
    std::exception_ptr error;
    auto worker = [&] {
        while (true) {
            const std::size_t i = next++;
            if (i >= todo.size()) return;
            {
                const std::lock_guard lock(mutex);
                if (error) return;
            }
            try {
                const std::string json = run_cell(*todo[i]);
                const std::lock_guard lock(mutex);
                write_file_atomically(cell_path(dir, todo[i]->id), json);
                progress(static_cast<double>(++done) / static_cast<double>(todo.size()));
            } catch (...) {
                const std::lock_guard lock(mutex);
                if (!error) error = std::current_exception();
            }
        }
    };
    std::vector<std::thread> threads;
    for (unsigned t = 1; t < jobs; ++t) threads.emplace_back(worker);
    worker();
    for (auto& t : threads) t.join();
    if (error) std::rethrow_exception(error);
}

std::vector<CellRecord> read_cells(const std::vector<std::string>& paths) {
    std::map<std::string, CellRecord> by_id;
    auto take = [&](const std::string& where, const std::string& line) {
        CellRecord rec;
        try {
            rec = parse_cell_record(line);
        } catch (const std::invalid_argument& e) {
            throw GridError(fmt::format("{}: not a sweep cell ({})", where, e.what()));
        }
        const auto [it, fresh] = by_id.emplace(rec.id, rec);
        if (!fresh && it->second.text != rec.text)
            throw GridError(fmt::format("{}: cell {} given twice with different results", where, rec.id));
    };
    auto read_lines = [&](const std::string& file) {
        std::ifstream in(file);
        if (!in) throw InputError(fmt::format("{}: cannot open", file));
        std::string line;
        for (unsigned n = 1; std::getline(in, line); ++n)
            if (!line.empty()) take(fmt::format("{}:{}", file, n), line);
    };
    for (const std::string& p : paths) {
        if (!fs::is_directory(p)) {
            read_lines(p);
            continue;
        }
        std::vector<std::string> files;
        for (const auto& e : fs::directory_iterator(fs::path(p) / "cells"))
            if (e.path().extension() == ".json") files.push_back(e.path().string());
        std::sort(files.begin(), files.end());
        for (const std::string& f : files) read_lines(f);
    }
    std::vector<CellRecord> out;
    for (auto& [id, rec] : by_id) out.push_back(std::move(rec));
    return out;
}

} // namespace timersim::sweep
