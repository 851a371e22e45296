// TraceError: what the trace readers (trace v1, ftrace import) throw for any
// bad input. It names the file, the 1-based line, what is wrong and the field
// at fault, and what() is exactly
//
//   FILE:LINE: what is wrong (field)
//
// so a caller prints it as it is (timersim prefixes "timersim: ").
#pragma once

#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>

namespace timersim {

class TraceError : public std::runtime_error {
public:
    TraceError(std::string file, std::uint64_t line, std::string field, std::string message);

    const std::string& file() const noexcept { return file_; }
    std::uint64_t line() const noexcept { return line_; }
    const std::string& field() const noexcept { return field_; }
    const std::string& message() const noexcept { return message_; }

private:
    std::string file_;
    std::uint64_t line_;
    std::string field_;
    std::string message_;
};

// `text` for an error message: in single quotes, at most 40 characters (then
// "..."), with control and non-ASCII bytes shown as \xNN, so a message about
// arbitrary input stays one printable line.
std::string quote_for_error(std::string_view text);

} // namespace timersim
