// Output files (-o, --events) appear whole or not at all, and never at the
// expense of what the name pointed at. What an output name may be:
//
//   - "-": stdout, written straight (the final checks of run_main() report
//     a failed write);
//   - a new name, or an existing regular file: written to a temporary file
//     in the same directory, flushed, then renamed over the name. The
//     temporary is unnamed while it is written (Linux O_TMPFILE, linked in
//     through /proc/self/fd at commit and renamed at once), so not even
//     SIGKILL leaves a partial file behind; where the filesystem refuses O_TMPFILE (or /proc is not
//     mounted, or TIMERSIM_NO_TMPFILE is set in the environment) it is
//     NAME.tmp.PID, which SIGTERM, SIGINT and SIGHUP remove before the
//     process dies of them. An existing file keeps its permission bits;
//   - a character device or a FIFO (/dev/null, a terminal, a named pipe):
//     written straight into it, never replaced;
//   - a symlink: the same rules applied to the file it points at, so the
//     link stays a link (a regular target is replaced atomically next to the
//     target, in the target's directory). A dangling symlink is refused;
//   - anything else (a directory, a block device, a socket): refused.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace timersim {

// A file named by the user that cannot be used as asked (an output that is
// also an input, an output name that is a directory): the CLI reports it as
// one line "timersim: <what is wrong>" with exit status 2, without the usage
// hint (the file is at fault, not the options).
class FileUsageError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// An output file that cannot be created (what(): "FILE: cannot create file
// (reason)"). Commands create their outputs before they simulate, so this
// comes first; the CLI reports it as one line with exit status 2. A write
// that fails later is a failed run (std::runtime_error, exit 1).
class OutputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A file being written under a temporary name. commit() renames it into
// place; destroying it uncommitted removes the temporary file.
class AtomicOutputFile {
public:
    // Throws OutputError naming the file if it cannot be created, and
    // FileUsageError for a name it must not write (see above).
    explicit AtomicOutputFile(std::string path);
    ~AtomicOutputFile();
    AtomicOutputFile(const AtomicOutputFile&) = delete;
    AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

    std::FILE* get() const noexcept { return file_; }
    const std::string& path() const noexcept { return path_; }
    void write(std::string_view data);
    void commit();

private:
    enum class Mode { replace_unnamed, replace_named, direct, standard_output };
    [[noreturn]] void fail(const char* what);
    void discard() noexcept;
    std::string path_;   // as the user named it (for messages)
    std::string target_; // what gets replaced: path_, or a symlink's target
    std::string tmp_;    // the named temporary (replace_named; replace_unnamed while committing)
    Mode mode_ = Mode::replace_named;
    int tmp_slot_ = -1;  // its entry in the table the signal handler removes
    std::FILE* file_ = nullptr;
    bool committed_ = false;
    bool created_ = false; // the constructor succeeded: later failures are a failed run
};

// Throws std::runtime_error naming the file if it cannot be written.
void write_file_atomically(const std::string& path, std::string_view content);

// Whether two names are the same file as the kernel sees it: the same
// device and inode (through any symlink or hard link), or, for names that
// do not exist yet, the same directory and last name.
bool same_file(const std::string& a, const std::string& b);

} // namespace timersim
