// A pipe that a thread of the test writes bytes into, for tests of inputs
// read from a pipe: InputFile opens its read end by name (/dev/fd/N).
#pragma once

#include <fmt/format.h>

#include <unistd.h>

#include <cstddef>
#include <stdexcept>
#include <string>
#include <thread>

namespace timersim::test {

class WrittenPipe {
public:
    // Writes `bytes` (which must outlive this), then closes the write end.
    explicit WrittenPipe(const std::string& bytes) {
        if (::pipe(fds_) != 0) throw std::runtime_error("no pipe");
        writer_ = std::thread([&bytes, fd = fds_[1]] {
            for (std::size_t at = 0; at < bytes.size();) {
                const ssize_t w = ::write(fd, bytes.data() + at, bytes.size() - at);
                if (w <= 0) break;
                at += static_cast<std::size_t>(w);
            }
            ::close(fd);
        });
    }
    // Waits for the writer: the reader must have read to the end (or
    // closed its own descriptor on the pipe) by then.
    ~WrittenPipe() {
        writer_.join();
        ::close(fds_[0]);
    }
    WrittenPipe(const WrittenPipe&) = delete;
    WrittenPipe& operator=(const WrittenPipe&) = delete;

    std::string name() const { return fmt::format("/dev/fd/{}", fds_[0]); }

private:
    int fds_[2] = {-1, -1};
    std::thread writer_;
};

} // namespace timersim::test
