// LineSource: reads text line by line from a std::istream, a FILE* or an
// InputFile (any file, standard input, compressed or not) through
// one fixed buffer, so memory stays constant however long the input is. A
// line is handed out as a string_view into that buffer, without its '\n' (and
// without a '\r' before it); it stays valid until the next call to next().
// Internal to the trace readers.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <istream>
#include <memory>
#include <string>
#include <string_view>

namespace timersim {
class InputFile;
}

namespace timersim::detail {

class LineSource {
public:
    enum class Status : std::uint8_t { line, end, too_long, read_error };

    LineSource(std::istream& in, std::size_t max_line);
    LineSource(std::FILE* in, std::size_t max_line);
    LineSource(InputFile& in, std::size_t max_line);
    // Text already in memory (which must outlive the source): lines are
    // views into it, with no copy (a stream over it copies every byte into
    // the buffer, and std::istringstream copies it once more).
    LineSource(std::string_view text, std::size_t max_line);

    // The next line. On too_long, `line` is the first max_line bytes and the
    // source cannot continue; on read_error the stream failed.
    Status next(std::string_view& line) {
        // Inline while the buffer holds a whole line (almost every call);
        // next_slow() refills, and handles the last line and long ones.
        const char* const from = buffer_ + begin_;
        const auto* nl = static_cast<const char*>(std::memchr(from, '\n', end_ - begin_));
        if (!nl || static_cast<std::size_t>(nl - from) > max_line_) return next_slow(line);
        std::size_t len = static_cast<std::size_t>(nl - from);
        begin_ += len + 1;
        if (len > 0 && from[len - 1] == '\r') --len;
        line = std::string_view(from, len);
        ++line_number_;
        return Status::line;
    }

    // One past the last byte a parser may load from, past the end of the
    // line it was given: the buffer's end plus kReadSlack zeroed bytes (or
    // the end of the text in memory). Bytes after a line are the next
    // lines or stale ones; a parser that loads 8 or 16 at a time must stop
    // at the line's end itself.
    const char* readable_end() const noexcept { return owned_ ? buffer_ + capacity_ + kReadSlack : buffer_ + end_; }
    static constexpr std::size_t kReadSlack = 16;

    // 1-based number of the line last returned (0 before the first); after
    // read_error, the line that could not be read.
    std::uint64_t line_number() const noexcept { return line_number_; }
    std::size_t max_line() const noexcept { return max_line_; }
    // After read_error: what failed ("" if the stream does not say).
    std::string error() const;

private:
    Status next_slow(std::string_view& line);
    std::size_t fill(char* to, std::size_t n);
    std::istream* stream_ = nullptr;
    std::FILE* file_ = nullptr;
    InputFile* input_ = nullptr;
    std::size_t max_line_;
    std::size_t capacity_;
    std::unique_ptr<char[]> owned_; // the buffer, unless reading text in memory
    char* buffer_ = nullptr;        // owned_, or that text (then only read)
    std::size_t begin_ = 0; // first byte not yet handed out
    std::size_t end_ = 0;   // one past the last byte read
    bool eof_ = false;
    bool failed_ = false;
    std::uint64_t line_number_ = 0;
};

// A TraceError for `file` at the source's current line (line 1 before any).
[[noreturn]] void fail_at(const LineSource& source, const std::string& file, std::string_view field,
                          std::string message);

// What read_line_or_throw() does with a status other than `line`.
bool end_or_throw(const LineSource& source, const std::string& file, LineSource::Status status);

// The next line, or false at the end; overlong lines and read errors throw
// TraceError, so both readers report them the same way.
inline bool read_line_or_throw(LineSource& source, const std::string& file, std::string_view& line) {
    const LineSource::Status status = source.next(line);
    if (status == LineSource::Status::line) [[likely]]
        return true;
    return end_or_throw(source, file, status);
}

} // namespace timersim::detail
