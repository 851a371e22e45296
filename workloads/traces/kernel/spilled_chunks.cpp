#include "workloads/traces/kernel/spilled_chunks.hpp"

#include "workloads/traces/input/input_file.hpp"

#include <cerrno>

#include <unistd.h>

namespace timersim::spill_io {

int open(const std::string& name) {
    const int fd = open_temporary_file();
    if (fd < 0) throw_temporary_file_error(name, "cannot make a file for the kernel's fires", errno);
    return fd;
}

void write_at(int fd, std::uint64_t offset, const void* bytes, std::size_t n, const std::string& name) {
    const char* p = static_cast<const char*>(bytes);
    while (n > 0) {
        const ssize_t put = ::pwrite(fd, p, n, static_cast<off_t>(offset));
        if (put < 0 && errno == EINTR) continue;
        if (put == 0) errno = ENOSPC; // pwrite() says nothing else when it writes nothing
        if (put <= 0) throw_temporary_file_error(name, "cannot write the kernel's fires to a file", errno);
        p += put;
        offset += static_cast<std::uint64_t>(put);
        n -= static_cast<std::size_t>(put);
    }
}

void read_at(int fd, std::uint64_t offset, void* bytes, std::size_t n, const std::string& name) {
    char* p = static_cast<char*>(bytes);
    while (n > 0) {
        const ssize_t got = ::pread(fd, p, n, static_cast<off_t>(offset));
        if (got < 0 && errno == EINTR) continue;
        if (got == 0) errno = EIO; // shorter than written: the file was cut
        if (got <= 0) throw_temporary_file_error(name, "cannot read the kernel's fires back from their file", errno);
        p += got;
        offset += static_cast<std::uint64_t>(got);
        n -= static_cast<std::size_t>(got);
    }
}

void close(int fd) noexcept { ::close(fd); }

} // namespace timersim::spill_io
