#include "workloads/traces/input/trace_error.hpp"
#include "workloads/traces/layouts/trace_event.hpp"

#include <fmt/format.h>

namespace timersim {

TraceError::TraceError(std::string file, std::uint64_t line, std::string field, std::string message)
    : std::runtime_error(fmt::format("{}:{}: {} ({})", file, line, message, field)),
      file_(std::move(file)), line_(line), field_(std::move(field)), message_(std::move(message)) {}

std::string quote_for_error(std::string_view text) {
    constexpr std::size_t kMax = 40;
    std::string out = "'";
    const bool cut = text.size() > kMax;
    if (cut) text = text.substr(0, kMax);
    for (const char c : text) {
        const auto u = static_cast<unsigned char>(c);
        if (u < 0x20 || u >= 0x7f || c == '\'' || c == '\\')
            out += fmt::format("\\x{:02x}", u);
        else
            out += c;
    }
    out += cut ? "'..." : "'";
    return out;
}

std::string_view to_string(TraceEventKind kind) noexcept {
    switch (kind) {
    case TraceEventKind::arm: return "arm";
    case TraceEventKind::modify: return "modify";
    case TraceEventKind::cancel: return "cancel";
    }
    return "?";
}

std::uint64_t ticks_at(unsigned hz, std::uint64_t time_ns) noexcept { return tick_index_at(time_ns, hz); }

Jiffies jiffies_at(const TraceHeader& header, std::uint64_t time_ns) noexcept {
    return header.start_jiffies + ticks_at(header.hz, time_ns);
}

Jiffies expiry_jiffies(const TraceHeader& header, const TraceEvent& event) noexcept {
    using u128 = unsigned __int128;
    switch (event.expiry) {
    case ExpiryForm::at_jiffies: return event.expiry_value;
    case ExpiryForm::in_jiffies: return jiffies_at(header, event.time_ns) + event.expiry_value;
    case ExpiryForm::in_ns: {
        const u128 j = (static_cast<u128>(event.expiry_value) * header.hz + 999999999u) / 1000000000u;
        return jiffies_at(header, event.time_ns) + static_cast<Jiffies>(j);
    }
    case ExpiryForm::none: break;
    }
    return jiffies_at(header, event.time_ns);
}

} // namespace timersim
