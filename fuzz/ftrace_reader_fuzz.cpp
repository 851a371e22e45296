// libFuzzer target: FtraceReader + FtraceImporter on arbitrary bytes (built by
// scripts/fuzz, not by meson). Besides crashes, leaks and UB it checks that
//   * every error is a TraceError whose what() is one line "fuzz:LINE: ... (field)";
//   * the importer's events are in time order and always writable as a trace v1
//     that TraceReader reads back without error, event for event (cb= included).
#include "fuzz/fuzz_checks.hpp"
#include "workloads/traces/kernel/ftrace_import.hpp"
#include "workloads/traces/layouts/ftrace_reader.hpp"
#include "workloads/traces/layouts/trace_reader.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"

#include <cstdint>
#include <cstdlib>
#include <optional>
#include <sstream>
#include <string>

using namespace timersim;
using timersim::fuzz::check;
using timersim::fuzz::check_error;

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    // The first byte picks --hz (or none, so "# hz=" lines matter).
    std::optional<unsigned> hz;
    if (size > 0) {
        if (data[0] & 1) hz = 1 + data[0] % 250 * 4;
        ++data;
        --size;
    }
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    std::ostringstream out;
    std::uint64_t written = 0;
    try {
        FtraceReader reader(in, "fuzz", hz);
        FtraceImporter importer(reader, 1 + (size % 7) * 3000000);
        std::optional<TraceWriter> writer;
        TraceEvent e;
        std::uint64_t last = 0;
        while (importer.next(e)) {
            check(e.time_ns >= last);
            last = e.time_ns;
            check(e.cb.has_value() == e.cb_key.has_value());
            if (!writer) writer.emplace(out, importer.header());
            writer->write(e);
            ++written;
        }
        check(importer.stats().arms + importer.stats().modifies + importer.stats().cancels == written);
        if (!writer) return 0;
        writer->flush();
    } catch (const TraceError& e) {
        check_error(e);
        return 0;
    }
    std::istringstream again(out.str());
    try {
        TraceReader reader(again, "again");
        TraceEvent e;
        std::uint64_t n = 0;
        while (reader.next(e)) ++n;
        check(n == written);
    } catch (const TraceError&) {
        std::abort(); // the importer produced something the trace reader rejects
    }
    return 0;
}
