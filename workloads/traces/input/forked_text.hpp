// A binary trace rendered as kernel text by a library run in a forked
// child: trace.dat (libtracecmd, trace_dat.hpp) and LTTng's CTF
// (libbabeltrace2, lttng_ctf.hpp). The child writes the text into an
// unlinked temporary file and its error into a pipe:
//
//   const int fd = render_in_child(name, {.what = "a trace.dat (trace-cmd)", .library = "libtracecmd",
//                                         .reader = "trace.dat"},
//                                  [&](int text_fd) { ... write the text to text_fd ... });
//   return InputFile::from_temporary(fd, name);
//
// Errors (InputError): an InputError the child's `render` throws is the
// error, as it is; its death by a signal (a library's error path that
// crashes on a damaged file) is "NAME: WHAT that cannot be read: LIBRARY
// failed on it (SIGNAL): truncated or corrupt", never timersim's crash; a
// child whose end cannot be learnt (waitpid() fails: SIGCHLD ignored) is
// "NAME: cannot learn how its READER reader ended", never taken for
// success. The child's stdout and stderr go to /dev/null (libraries print
// complaints with plain fprintf), and it leaves by _exit(): no destructors
// or atexit handlers of the parent's state run in it.
#pragma once

#include "workloads/traces/input/input_file.hpp"

#include <functional>
#include <string>
#include <string_view>
#include <utility>

#include <unistd.h>

namespace timersim {

struct ForkedReader {
    std::string_view what;    // "a trace.dat (trace-cmd)": "NAME: WHAT that cannot be read: why"
    std::string_view library; // "libtracecmd"
    std::string_view reader;  // "trace.dat": "cannot learn how its READER reader ended"
};

// Throws InputError "NAME: WHAT that cannot be read: WHY".
[[noreturn]] void throw_unreadable(const std::string& name, const ForkedReader& reader, std::string_view why);

// A new temporary file holding the text `render` writes into the
// descriptor it is given, run in a child process: its descriptor. Throws
// InputError (see the top).
int render_in_child(const std::string& name, const ForkedReader& reader, const std::function<void(int)>& render);

// write() of all of `data`, retried on EINTR: false (errno set) on an error.
bool write_all(int fd, std::string_view data);

// A descriptor closed when it goes out of scope.
struct Fd {
    int fd = -1;
    Fd() = default;
    explicit Fd(int f) : fd(f) {}
    Fd(Fd&& other) noexcept : fd(other.release()) {}
    Fd(const Fd&) = delete;
    Fd& operator=(const Fd&) = delete;
    ~Fd() {
        if (fd >= 0) ::close(fd);
    }
    int release() { return std::exchange(fd, -1); }
};

} // namespace timersim
