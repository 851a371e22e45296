#include "workloads/traces/input/line_source.hpp"

#include "workloads/traces/input/input_file.hpp"
#include "workloads/traces/input/trace_error.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>

namespace timersim::detail {

namespace {
constexpr std::size_t kMinChunk = 64 * 1024;
}

LineSource::LineSource(std::istream& in, std::size_t max_line)
    : stream_(&in), max_line_(max_line), capacity_(std::max(kMinChunk, 2 * max_line)),
      owned_(new char[capacity_ + kReadSlack]()), buffer_(owned_.get()) {}

LineSource::LineSource(std::FILE* in, std::size_t max_line)
    : file_(in), max_line_(max_line), capacity_(std::max(kMinChunk, 2 * max_line)),
      owned_(new char[capacity_ + kReadSlack]()), buffer_(owned_.get()) {}

LineSource::LineSource(InputFile& in, std::size_t max_line)
    : input_(&in), max_line_(max_line), capacity_(std::max(kMinChunk, 2 * max_line)),
      owned_(new char[capacity_ + kReadSlack]()), buffer_(owned_.get()) {}

// All of the text is "read" (end_ and eof_), so next() only ever finds lines
// in it: it never moves or fills the buffer, which is the caller's text.
LineSource::LineSource(std::string_view text, std::size_t max_line)
    : max_line_(max_line), capacity_(text.size()), buffer_(const_cast<char*>(text.empty() ? "" : text.data())),
      end_(text.size()), eof_(true) {}

std::string LineSource::error() const { return input_ ? input_->error() : std::string(); }

std::size_t LineSource::fill(char* to, std::size_t n) {
    if (input_) {
        const std::size_t got = input_->read(to, n);
        if (got < n) {
            eof_ = true;
            if (input_->failed()) failed_ = true;
        }
        return got;
    }
    if (stream_) {
        stream_->read(to, static_cast<std::streamsize>(n));
        const auto got = static_cast<std::size_t>(stream_->gcount());
        if (got < n) {
            eof_ = true;
            if (stream_->bad()) failed_ = true;
        }
        return got;
    }
    const std::size_t got = std::fread(to, 1, n, file_);
    if (got < n) {
        eof_ = true;
        if (std::ferror(file_)) failed_ = true;
    }
    return got;
}

LineSource::Status LineSource::next_slow(std::string_view& line) {
    char* const buf = buffer_;
    std::size_t scanned = begin_; // bytes before this were searched already
    while (true) {
        const auto* nl = static_cast<const char*>(std::memchr(buf + scanned, '\n', end_ - scanned));
        if (nl) {
            std::size_t len = static_cast<std::size_t>(nl - (buf + begin_));
            if (len > max_line_) {
                line = std::string_view(buf + begin_, max_line_);
                ++line_number_;
                return Status::too_long;
            }
            const std::size_t next_begin = begin_ + len + 1;
            if (len > 0 && buf[begin_ + len - 1] == '\r') --len;
            line = std::string_view(buf + begin_, len);
            begin_ = next_begin;
            ++line_number_;
            return Status::line;
        }
        if (end_ - begin_ > max_line_) {
            line = std::string_view(buf + begin_, max_line_);
            ++line_number_;
            return Status::too_long;
        }
        if (eof_) {
            if (failed_) {
                ++line_number_; // the line that could not be read
                return Status::read_error;
            }
            if (begin_ == end_) return Status::end;
            std::size_t len = end_ - begin_;
            if (buf[begin_ + len - 1] == '\r') --len;
            line = std::string_view(buf + begin_, len);
            begin_ = end_;
            ++line_number_;
            return Status::line;
        }
        // Move the partial line to the front and read more behind it.
        const std::size_t partial = end_ - begin_;
        if (begin_ > 0) {
            std::memmove(buf, buf + begin_, partial);
            begin_ = 0;
            end_ = partial;
        }
        scanned = end_;
        end_ += fill(buf + end_, capacity_ - end_);
    }
}

void fail_at(const LineSource& source, const std::string& file, std::string_view field, std::string message) {
    throw TraceError(file, source.line_number() == 0 ? 1 : source.line_number(), std::string(field),
                     std::move(message));
}

bool end_or_throw(const LineSource& source, const std::string& file, LineSource::Status status) {
    switch (status) {
    case LineSource::Status::line: return true;
    case LineSource::Status::end: return false;
    case LineSource::Status::too_long:
        fail_at(source, file, "line", fmt::format("line longer than {} bytes", source.max_line()));
    case LineSource::Status::read_error:
        if (const std::string why = source.error(); !why.empty())
            fail_at(source, file, "line", fmt::format("read error: {}", why));
        fail_at(source, file, "line", "read error");
    }
    return false;
}

} // namespace timersim::detail
