#include "sim/sweep/sweep_results.hpp"

#include "sim/report/json.hpp"

#include <fmt/core.h>
#include <nlohmann/json.hpp>

#include <algorithm>
#include <stdexcept>

namespace timersim::sweep {

namespace {

// CSV field: quoted when it holds a comma or a quote.
std::string csv_field(const std::string& s) {
    if (s.find_first_of(",\"\n") == std::string::npos) return s;
    std::string out = "\"";
    for (char c : s) out += c == '"' ? std::string("\"\"") : std::string(1, c);
    return out + "\"";
}

constexpr const char* kCsvHeader =
    "id,design,hz,workload,seed,options,ticks,fired,early,late_p50_jiffies,late_p99_jiffies,late_max_jiffies,"
    "late_p50_ns,late_p99_ns,late_max_ns,timer_work_ns,softirq_work_ns,max_softirq_ns,cascade_moves,bytes_per_timer\n";

} // namespace

std::string cell_json(const Cell& cell, const RunResult& r) {
    const CpuMetrics& m = r.total;
    const auto lateness = [](const auto& histogram) {
        ordered_json out = ordered_json::object();
        out["p50"] = histogram.percentile(50);
        out["p99"] = histogram.percentile(99);
        out["max"] = histogram.max();
        return out;
    };
    ordered_json doc = ordered_json::object();
    doc["schema"] = kSweepCellSchema;
    doc["id"] = cell.id;
    doc["args"] = cell.line;
    doc["design"] = design_name(r);
    doc["hz"] = r.config.hz;
    doc["workload"] = cell.workload;
    doc["seed"] = cell.seed;
    doc["options"] = cell.options;
    doc["ticks"] = r.config.ticks;
    doc["fired"] = m.fired;
    doc["early"] = m.early;
    doc["late_jiffies"] = lateness(m.error_jiffies);
    doc["late_ns"] = lateness(m.error_ns);
    doc["timer_work_ns"] = m.timer_work_ns();
    doc["softirq_work_ns"] = m.softirq_work_ns;
    doc["max_softirq_ns"] = m.max_softirq_ns;
    doc["cascade_moves"] = m.counters.cascade_moves;
    doc["bytes_per_timer"] = r.bytes_per_timer;
    // One line: the default layout expands nothing.
    return write_json(doc, {}) + "\n";
}

CellRecord parse_cell_record(const std::string& line) {
    nlohmann::json j;
    try {
        j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
        throw std::invalid_argument("not JSON");
    }
    if (!j.is_object() || j.value("schema", "") != kSweepCellSchema)
        throw std::invalid_argument(fmt::format("not a {} cell", kSweepCellSchema));
    CellRecord rec;
    try {
        rec.id = j.at("id").get<std::string>();
        rec.args = j.at("args").get<std::string>();
        const Cell cell = cell_from_line(rec.args);
        if (cell.id != rec.id) throw std::invalid_argument("its id does not match its args");
        auto num = [&](const char* k) { return std::to_string(j.at(k).get<std::int64_t>()); };
        auto sub = [&](const char* k, const char* p) { return std::to_string(j.at(k).at(p).get<std::int64_t>()); };
        rec.csv_row = fmt::format(
            "{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", rec.id,
            csv_field(j.at("design").get<std::string>()), num("hz"), csv_field(j.at("workload").get<std::string>()),
            num("seed"), csv_field(j.at("options").get<std::string>()), num("ticks"), num("fired"), num("early"),
            sub("late_jiffies", "p50"), sub("late_jiffies", "p99"), sub("late_jiffies", "max"), sub("late_ns", "p50"),
            sub("late_ns", "p99"), sub("late_ns", "max"), num("timer_work_ns"), num("softirq_work_ns"),
            num("max_softirq_ns"), num("cascade_moves"), num("bytes_per_timer"));
    } catch (const nlohmann::json::exception& e) {
        throw std::invalid_argument(fmt::format("missing or bad field ({})", e.what()));
    } catch (const std::runtime_error& e) { // cell_from_line's GridError
        throw std::invalid_argument(e.what());
    }
    rec.text = line.ends_with('\n') ? line : line + "\n";
    return rec;
}

std::string results_csv(std::vector<CellRecord> records) {
    std::sort(records.begin(), records.end(), [](const CellRecord& a, const CellRecord& b) { return a.args < b.args; });
    std::string out = kCsvHeader;
    for (const CellRecord& r : records) out += r.csv_row;
    return out;
}

} // namespace timersim::sweep
