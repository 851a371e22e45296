#include "sim/report/atomic_file.hpp"

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <climits>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <stdexcept>
#include <vector>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace timersim {

namespace {

// ---------------------------------------------------------------------------
// Named temporaries the signal handler removes. A fixed table, filled before
// the file is created and emptied after it is renamed or removed, so that the
// handler needs nothing but loads and unlink(). Slots are never reused: the
// handler, on any thread, never reads a path while it is being rewritten.

constexpr int kTempSlots = 64;

struct TempSlot {
    std::atomic<bool> active{false};
    char path[PATH_MAX];
};

TempSlot g_temps[kTempSlots];
std::atomic<int> g_temps_used{0};

constexpr int kCleanupSignals[] = {SIGTERM, SIGINT, SIGHUP};

extern "C" void remove_temps_and_die(int sig) {
    const int saved_errno = errno;
    const int used = std::min(g_temps_used.load(std::memory_order_acquire), kTempSlots);
    for (int i = 0; i < used; ++i)
        if (g_temps[i].active.load(std::memory_order_acquire)) ::unlink(g_temps[i].path);
    errno = saved_errno;
    // SA_RESETHAND restored the default action and SA_NODEFER left the signal
    // unblocked: this ends the process as the signal would have (the shell
    // sees 128 + sig).
    ::raise(sig);
}

void install_cleanup_handlers() {
    static std::once_flag once;
    std::call_once(once, [] {
        for (const int sig : kCleanupSignals) {
            struct sigaction old{};
            if (::sigaction(sig, nullptr, &old) != 0) continue;
            // An ignored signal (nohup, a background job's SIGINT) stays ignored.
            if (old.sa_handler == SIG_IGN) continue;
            struct sigaction act{};
            act.sa_handler = remove_temps_and_die;
            sigemptyset(&act.sa_mask);
            act.sa_flags = SA_RESETHAND | SA_NODEFER;
            ::sigaction(sig, &act, nullptr);
        }
    });
}

// The slot now holding `path`, or -1 (table full, or a path too long to
// create anyway: the destructor still removes the file).
int register_temp(const std::string& path) {
    install_cleanup_handlers();
    if (path.size() >= PATH_MAX) return -1;
    const int slot = g_temps_used.fetch_add(1, std::memory_order_acq_rel);
    if (slot >= kTempSlots) return -1;
    std::memcpy(g_temps[slot].path, path.c_str(), path.size() + 1);
    g_temps[slot].active.store(true, std::memory_order_release);
    return slot;
}

void unregister_temp(int& slot) noexcept {
    if (slot >= 0) g_temps[slot].active.store(false, std::memory_order_release);
    slot = -1;
}

// ---------------------------------------------------------------------------

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

[[noreturn]] void refuse(const std::string& path, std::string_view why) {
    throw FileUsageError(fmt::format("{}: {}", path, why));
}

bool unnamed_temporaries_allowed() {
    const char* off = std::getenv("TIMERSIM_NO_TMPFILE");
    if (off != nullptr && *off != '\0') return false;
    // linkat() of an O_TMPFILE file without CAP_DAC_READ_SEARCH goes
    // through its /proc/self/fd link.
    return ::access("/proc/self/fd", X_OK) == 0;
}

} // namespace

AtomicOutputFile::AtomicOutputFile(std::string path) : path_(std::move(path)), target_(path_) {
    if (path_ == "-") {
        mode_ = Mode::standard_output;
        file_ = stdout;
        { created_ = true; return; }
    }
    if (path_.empty()) refuse(path_, "an empty file name");

    struct stat st{};
    bool exists = ::lstat(path_.c_str(), &st) == 0;
    if (!exists && errno != ENOENT) fail("create file");
    if (exists && S_ISLNK(st.st_mode)) {
        // Write what the link points at; the link itself stays.
        char* resolved = ::realpath(path_.c_str(), nullptr);
        if (resolved == nullptr) {
            if (errno == ENOENT) refuse(path_, "a symlink to a file that does not exist; name the file itself");
            fail("resolve symlink");
        }
        target_ = resolved;
        std::free(resolved);
        if (::stat(target_.c_str(), &st) != 0) fail("create file");
    }
    if (exists) {
        if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) {
            // A device or a pipe is written into, never replaced (-o /dev/null
            // must not turn /dev/null into a regular file).
            mode_ = Mode::direct;
            const int fd = ::open(target_.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
            if (fd < 0) fail("open file");
            file_ = ::fdopen(fd, "wb");
            if (file_ == nullptr) {
                ::close(fd);
                fail("open file");
            }
            { created_ = true; return; }
        }
        if (S_ISDIR(st.st_mode)) refuse(path_, "is a directory");
        if (!S_ISREG(st.st_mode)) refuse(path_, "not a regular file, character device or FIFO; refusing to replace it");
    }

    const std::string dir = directory_of(target_);
    const mode_t keep_mode = exists ? (st.st_mode & 07777) : 0;
    int fd = -1;
    if (unnamed_temporaries_allowed()) {
        fd = ::open(dir.c_str(), O_TMPFILE | O_WRONLY | O_CLOEXEC, 0666);
        if (fd >= 0) {
            // O_TMPFILE applies the umask like O_CREAT does.
            mode_ = Mode::replace_unnamed;
            // A file that O_TMPFILE cannot make (old kernel, a filesystem
            // without it) falls back to a named temporary below.
        } else if (errno == EACCES || errno == ENOENT || errno == ENOTDIR || errno == EROFS || errno == ENOSPC ||
                   errno == EDQUOT) {
            fail("create file"); // a named temporary would fail the same way
        }
    }
    if (fd < 0) {
        mode_ = Mode::replace_named;
        tmp_ = target_ + ".tmp." + std::to_string(::getpid());
        tmp_slot_ = register_temp(tmp_); // before the file exists: no window without cleanup
        fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        if (fd < 0 && errno == EEXIST) {
            // Left behind by a killed process that had our pid.
            ::unlink(tmp_.c_str());
            fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
        }
        if (fd < 0) {
            unregister_temp(tmp_slot_);
            tmp_.clear();
            fail("create file");
        }
    }
    if (exists) (void)::fchmod(fd, keep_mode); // the replacement keeps the file's permissions
    file_ = ::fdopen(fd, "wb");
    if (file_ == nullptr) {
        ::close(fd);
        fail("create file");
    }
    created_ = true;
}

AtomicOutputFile::~AtomicOutputFile() {
    if (!committed_) discard();
}

void AtomicOutputFile::discard() noexcept {
    if (file_ != nullptr && mode_ != Mode::standard_output) std::fclose(file_);
    file_ = nullptr;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
    unregister_temp(tmp_slot_);
}

void AtomicOutputFile::fail(const char* what) {
    const std::string reason = std::strerror(errno);
    const bool creating = !created_; // before the constructor finished: nothing ran yet
    discard();
    const std::string message = path_ + ": cannot " + what + " (" + reason + ")";
    if (creating) throw OutputError(message);
    throw std::runtime_error(message);
}

void AtomicOutputFile::write(std::string_view data) {
    if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) fail("write file");
}

void AtomicOutputFile::commit() {
    switch (mode_) {
    case Mode::standard_output:
        // Flushed and checked with everything else written to stdout, at
        // the end of run_main().
        committed_ = true;
        return;
    case Mode::direct: {
        const int flushed = std::fflush(file_);
        const int closed = std::fclose(file_);
        file_ = nullptr;
        if (flushed != 0 || closed != 0) fail("write file");
        committed_ = true;
        return;
    }
    case Mode::replace_unnamed: {
        if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) fail("write file");
        // Give the file a name next to the target, then rename it over the
        // target (linkat cannot replace an existing name).
        tmp_ = target_ + ".tmp." + std::to_string(::getpid());
        tmp_slot_ = register_temp(tmp_);
        const std::string proc = "/proc/self/fd/" + std::to_string(::fileno(file_));
        int linked = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp_.c_str(), AT_SYMLINK_FOLLOW);
        if (linked != 0 && errno == EEXIST) {
            ::unlink(tmp_.c_str());
            linked = ::linkat(AT_FDCWD, proc.c_str(), AT_FDCWD, tmp_.c_str(), AT_SYMLINK_FOLLOW);
        }
        if (linked != 0) {
            const int saved = errno;
            unregister_temp(tmp_slot_);
            tmp_.clear();
            errno = saved;
            fail("link the temporary file into place");
        }
        break;
    }
    case Mode::replace_named:
        if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) fail("write file");
        break;
    }
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) fail("write file");
    if (std::rename(tmp_.c_str(), target_.c_str()) != 0) fail("rename temporary file into place");
    tmp_.clear();
    unregister_temp(tmp_slot_);
    committed_ = true;
}

void write_file_atomically(const std::string& path, std::string_view content) {
    AtomicOutputFile out(path);
    out.write(content);
    out.commit();
}

bool same_file(const std::string& a, const std::string& b) {
    struct stat sa{}, sb{};
    const bool a_exists = ::stat(a.c_str(), &sa) == 0;
    const bool b_exists = ::stat(b.c_str(), &sb) == 0;
    if (a_exists && b_exists) return sa.st_dev == sb.st_dev && sa.st_ino == sb.st_ino;
    if (a_exists || b_exists) return false;
    const auto canonical = [](const std::string& p) {
        const auto slash = p.rfind('/');
        const std::string base = slash == std::string::npos ? p : p.substr(slash + 1);
        char* dir = ::realpath(directory_of(p).c_str(), nullptr);
        if (dir == nullptr) return p;
        std::string out = std::string(dir) + "/" + base;
        std::free(dir);
        return out;
    };
    return canonical(a) == canonical(b);
}

} // namespace timersim
