#include "workloads/traces/layouts/trace_writer.hpp"

#include "workloads/traces/input/parse_util.hpp"

#include <stdexcept>
#include <utility>

namespace timersim {

namespace {

void check_text(std::string_view what, std::string_view text, std::size_t max, bool is_timer) {
    if (text.empty()) throw std::invalid_argument(fmt::format("trace writer: empty {}", what));
    if (text.size() > max) throw std::invalid_argument(fmt::format("trace writer: {} longer than {}", what, max));
    for (const char c : text)
        if (!detail::is_graph(c) || (is_timer && c == '='))
            throw std::invalid_argument(fmt::format("trace writer: {} '{}' has a character it cannot carry", what, text));
    if (is_timer && text.front() == '#') // would start a comment; "label=#x" would not
        throw std::invalid_argument(fmt::format("trace writer: {} '{}' starts with '#'", what, text));
    if (is_timer && detail::all_digits(text))
        throw std::invalid_argument(fmt::format("trace writer: symbolic timer '{}' is all digits", text));
}

} // namespace

TraceWriter::TraceWriter(std::FILE* out, const TraceHeader& header, std::string_view comment) : file_(out) {
    header_line(header, comment);
}

TraceWriter::TraceWriter(std::ostream& out, const TraceHeader& header, std::string_view comment) : stream_(&out) {
    header_line(header, comment);
}

TraceWriter::~TraceWriter() {
    try {
        flush();
    } catch (...) {
    }
}

void TraceWriter::header_line(const TraceHeader& header, std::string_view comment_text) {
    if (!valid_hz(header.hz))
        throw std::invalid_argument(fmt::format("trace writer: hz {} is not 1..{}", header.hz, kMaxHz));
    fmt::format_to(std::back_inserter(buffer_), "# timersim-trace v1 hz={} start_jiffies={}\n", header.hz,
                   header.start_jiffies);
    if (!comment_text.empty()) comment(comment_text);
}

void TraceWriter::comment(std::string_view text) {
    while (true) {
        const auto eol = text.find('\n');
        const std::string_view line = text.substr(0, eol);
        buffer_.append(std::string_view("# "));
        buffer_.append(line);
        buffer_.push_back('\n');
        if (eol == std::string_view::npos) break;
        text.remove_prefix(eol + 1);
    }
    maybe_flush();
}

void TraceWriter::write(const TraceEvent& e) {
    if (e.time_ns < last_time_)
        throw std::invalid_argument(
            fmt::format("trace writer: time {} ns is before the previous event's {} ns", e.time_ns, last_time_));
    const bool cancel = e.kind == TraceEventKind::cancel;
    if (cancel != (e.expiry == ExpiryForm::none))
        throw std::invalid_argument(cancel ? "trace writer: cancel with an expiry"
                                           : "trace writer: arm/modify without an expiry");
    if (e.key.symbolic) check_text("timer token", e.key.token, kMaxTimerToken, true);
    if (e.cb_key && e.cb_key->symbolic) check_text("callback timer token", e.cb_key->token, kMaxTimerToken, true);
    if (!e.label.empty()) check_text("label", e.label, kMaxLabel, false);
    if (e.cpu && *e.cpu > kMaxTraceCpu) throw std::invalid_argument("trace writer: cpu out of range");
    if (e.kidx && *e.kidx > 1023) throw std::invalid_argument("trace writer: kidx out of range");

    auto out = std::back_inserter(buffer_);
    if (e.key.symbolic)
        fmt::format_to(out, "{} {} {}", e.time_ns, to_string(e.kind), e.key.token);
    else
        fmt::format_to(out, "{} {} {}", e.time_ns, to_string(e.kind), e.key.number);
    switch (e.expiry) {
    case ExpiryForm::in_jiffies: fmt::format_to(out, " in={}j", e.expiry_value); break;
    case ExpiryForm::in_ns: fmt::format_to(out, " in={}ns", e.expiry_value); break;
    case ExpiryForm::at_jiffies: fmt::format_to(out, " at={}", e.expiry_value); break;
    case ExpiryForm::none: break;
    }
    if (e.flags.any()) {
        buffer_.append(std::string_view(" flags="));
        const char* sep = "";
        if (e.flags.deferrable) fmt::format_to(out, "{}deferrable", std::exchange(sep, ","));
        if (e.flags.pinned) fmt::format_to(out, "{}pinned", std::exchange(sep, ","));
        if (e.flags.irqsafe) fmt::format_to(out, "{}irqsafe", std::exchange(sep, ","));
    }
    if (e.cpu) fmt::format_to(out, " cpu={}", *e.cpu);
    if (!e.label.empty()) fmt::format_to(out, " label={}", e.label);
    if (e.kidx) fmt::format_to(out, " kidx={}", *e.kidx);
    if (e.know) fmt::format_to(out, " know={}", *e.know);
    if (e.cb_key) {
        if (e.cb_key->symbolic)
            fmt::format_to(out, " cb={}", e.cb_key->token);
        else
            fmt::format_to(out, " cb={}", e.cb_key->number);
    }
    buffer_.push_back('\n');
    last_time_ = e.time_ns;
    ++events_;
    maybe_flush();
}

void TraceWriter::flush() {
    if (buffer_.size() == 0) return;
    if (file_) {
        if (std::fwrite(buffer_.data(), 1, buffer_.size(), file_) != buffer_.size())
            throw std::runtime_error("cannot write the trace");
    } else {
        stream_->write(buffer_.data(), static_cast<std::streamsize>(buffer_.size()));
        if (!*stream_) throw std::runtime_error("cannot write the trace");
    }
    buffer_.clear();
}

} // namespace timersim
