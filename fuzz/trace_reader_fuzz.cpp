// libFuzzer target: TraceReader on arbitrary bytes (built by scripts/fuzz,
// not by meson). Besides crashes, leaks and UB it checks that
//   * every error is a TraceError whose what() is one line "fuzz:LINE: ... (field)";
//   * events come in non-decreasing time with dense ids below timer_count();
//   * whatever was read writes back (TraceWriter) and reads back as the same events.
#include "fuzz/fuzz_checks.hpp"
#include "workloads/traces/layouts/trace_reader.hpp"
#include "workloads/traces/layouts/trace_writer.hpp"

#include <cstdint>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

using namespace timersim;
using timersim::fuzz::check;
using timersim::fuzz::check_error;

namespace {

struct Owned {
    TraceEvent event;
    std::string token;
    std::string label;
    std::string cb_token;
};

} // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    std::istringstream in(std::string(reinterpret_cast<const char*>(data), size));
    std::vector<Owned> events;
    TraceHeader header;
    try {
        TraceReader reader(in, "fuzz");
        header = reader.header();
        TraceEvent e;
        std::uint64_t last = 0;
        while (reader.next(e)) {
            check(e.time_ns >= last);
            last = e.time_ns;
            check(e.timer < reader.timer_count());
            check(reader.timer_key(e.timer) == e.key);
            check(e.cb.has_value() == e.cb_key.has_value());
            if (e.cb) {
                check(*e.cb < reader.timer_count());
                check(reader.timer_key(*e.cb) == *e.cb_key);
            }
            Owned o{e, std::string(e.key.token), std::string(e.label),
                    e.cb_key ? std::string(e.cb_key->token) : std::string()};
            events.push_back(std::move(o));
        }
    } catch (const TraceError& e) {
        check_error(e);
        return 0;
    }

    // Round trip.
    std::ostringstream out;
    {
        TraceWriter writer(out, header);
        for (Owned& o : events) {
            TraceEvent e = o.event;
            e.key.token = o.token;
            e.label = o.label;
            if (e.cb_key) e.cb_key->token = o.cb_token;
            writer.write(e);
        }
        writer.flush();
    }
    std::istringstream again(out.str());
    try {
        TraceReader reader(again, "again");
        check(reader.header().hz == header.hz && reader.header().start_jiffies == header.start_jiffies);
        TraceEvent e;
        std::size_t i = 0;
        while (reader.next(e)) {
            check(i < events.size());
            const TraceEvent& w = events[i].event;
            check(e.time_ns == w.time_ns && e.kind == w.kind && e.timer == w.timer);
            check(e.key.symbolic == w.key.symbolic && e.key.number == w.key.number && e.key.token == events[i].token);
            check(e.expiry == w.expiry && e.expiry_value == w.expiry_value && e.flags == w.flags);
            check(e.cpu == w.cpu && e.label == events[i].label && e.kidx == w.kidx && e.know == w.know);
            check(e.cb == w.cb && e.cb_key.has_value() == w.cb_key.has_value());
            if (e.cb_key) {
                check(e.cb_key->symbolic == w.cb_key->symbolic && e.cb_key->number == w.cb_key->number);
                check(e.cb_key->token == events[i].cb_token);
            }
            ++i;
        }
        check(i == events.size());
    } catch (const TraceError&) {
        std::abort(); // the writer wrote something the reader rejects
    }
    return 0;
}
