#include "workloads/traces/input/forked_text.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <exception>

#include <fcntl.h>
#include <sys/wait.h>

namespace timersim {

void throw_unreadable(const std::string& name, const ForkedReader& reader, std::string_view why) {
    throw InputError(fmt::format("{}: {} that cannot be read: {}", name, reader.what, why));
}

bool write_all(int fd, std::string_view data) {
    while (!data.empty()) {
        const ssize_t n = ::write(fd, data.data(), data.size());
        if (n < 0 && errno == EINTR) continue;
        if (n == 0) errno = ENOSPC; // write() says nothing else when it writes nothing
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

namespace {

std::string read_to_end(int fd) {
    std::string out;
    char buf[65536];
    while (true) {
        const ssize_t n = ::read(fd, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        out.append(buf, static_cast<std::size_t>(n));
    }
    return out;
}

} // namespace

int render_in_child(const std::string& name, const ForkedReader& reader, const std::function<void(int)>& render) {
    Fd text{open_temporary_file()};
    if (text.fd < 0) throw_temporary_file_error(name, "no temporary file for its text", errno);
    int error_pipe[2];
    if (::pipe(error_pipe) != 0) throw_unreadable(name, reader, fmt::format("no pipe ({})", std::strerror(errno)));
    Fd error_read{error_pipe[0]}, error_write{error_pipe[1]};
    std::fflush(nullptr);
    const pid_t child = ::fork();
    if (child < 0)
        throw_unreadable(name, reader, fmt::format("cannot fork to read it ({})", std::strerror(errno)));
    if (child == 0) {
        ::close(error_read.release());
        // A crash must kill the child, whatever handlers the parent set (a
        // test framework's, a sanitizer's).
        for (const int sig : {SIGSEGV, SIGBUS, SIGABRT, SIGFPE, SIGILL}) std::signal(sig, SIG_DFL);
        if (const int null = ::open("/dev/null", O_WRONLY); null >= 0) {
            ::dup2(null, STDOUT_FILENO);
            ::dup2(null, STDERR_FILENO);
            ::close(null);
        }
        int status = 0;
        try {
            render(text.fd);
        } catch (const std::exception& e) {
            write_all(error_write.fd, e.what());
            status = 1;
        }
        ::_exit(status); // no destructors, atexit handlers or leak checks of the parent's state
    }
    ::close(error_write.release());
    const std::string error = read_to_end(error_read.fd);
    int status = 0;
    pid_t waited = 0;
    do waited = ::waitpid(child, &status, 0);
    while (waited < 0 && errno == EINTR);
    // Without its status (ECHILD: SIGCHLD ignored, the child reaped by
    // the kernel), the text may be cut short: not a success.
    if (waited < 0)
        throw InputError(fmt::format("{}: cannot learn how its {} reader ended ({})", name, reader.reader,
                                     std::strerror(errno)));
    if (WIFSIGNALED(status))
        throw_unreadable(name, reader,
                         fmt::format("{} failed on it ({}): truncated or corrupt", reader.library,
                                     ::strsignal(WTERMSIG(status))));
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
        if (!error.empty()) throw InputError(error);
        throw_unreadable(name, reader, "its reader stopped early");
    }
    return text.release();
}

} // namespace timersim
