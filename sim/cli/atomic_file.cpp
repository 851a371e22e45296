#include "sim/cli/atomic_file.hpp"

#include "sim/cli/cli.hpp"

#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

namespace timersim {

namespace {

std::string directory_of(const std::string& path) {
    const auto slash = path.rfind('/');
    if (slash == std::string::npos) return ".";
    if (slash == 0) return "/";
    return path.substr(0, slash);
}

[[noreturn]] void refuse(const std::string& path, std::string_view why) {
    throw cli::FileUsageError(fmt::format("{}: {}", path, why));
}

} // namespace

AtomicOutputFile::AtomicOutputFile(std::string path) : path_(std::move(path)), target_(path_) {
    if (path_ == "-") {
        mode_ = Mode::standard_output;
        file_ = stdout;
        return;
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
            return;
        }
        if (S_ISDIR(st.st_mode)) refuse(path_, "is a directory");
        if (!S_ISREG(st.st_mode)) refuse(path_, "not a regular file, character device or FIFO; refusing to replace it");
    }

    const mode_t keep_mode = exists ? (st.st_mode & 07777) : 0;
    mode_ = Mode::replace_named;
    tmp_ = target_ + ".tmp." + std::to_string(::getpid());
    int fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    if (fd < 0 && errno == EEXIST) {
        // Left behind by a killed process that had our pid.
        ::unlink(tmp_.c_str());
        fd = ::open(tmp_.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0666);
    }
    if (fd < 0) {
        tmp_.clear();
        fail("create file");
    }
    if (exists) (void)::fchmod(fd, keep_mode); // the replacement keeps the file's permissions
    file_ = ::fdopen(fd, "wb");
    if (file_ == nullptr) {
        ::close(fd);
        fail("create file");
    }
}

AtomicOutputFile::~AtomicOutputFile() {
    if (!committed_) discard();
}

void AtomicOutputFile::discard() noexcept {
    if (file_ != nullptr && mode_ != Mode::standard_output) std::fclose(file_);
    file_ = nullptr;
    if (!tmp_.empty()) ::unlink(tmp_.c_str());
    tmp_.clear();
}

void AtomicOutputFile::fail(const char* what) {
    const std::string reason = std::strerror(errno);
    discard();
    throw std::runtime_error(path_ + ": cannot " + what + " (" + reason + ")");
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
    case Mode::replace_named:
        if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) fail("write file");
        break;
    }
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) fail("write file");
    if (std::rename(tmp_.c_str(), target_.c_str()) != 0) fail("rename temporary file into place");
    tmp_.clear();
    committed_ = true;
}

void write_file_atomically(const std::string& path, std::string_view content) {
    AtomicOutputFile out(path);
    out.write(content);
    out.commit();
}

namespace {

std::string option_label(std::string_view name) {
    if (name == "output") return "-o";
    if (name == "input") return "FILE";
    return fmt::format("--{}", name);
}

// The file `path` names, as the kernel sees it: the same device and inode,
// or, for a name that does not exist yet, the same directory and last name.
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

} // namespace

void refuse_output_onto_input(const boost::program_options::variables_map& vm,
                              std::initializer_list<const char*> outputs, std::initializer_list<const char*> inputs) {
    const auto given = [&](const char* name) { return vm.count(name) != 0 && vm[name].as<std::string>() != "-"; };
    for (auto out = outputs.begin(); out != outputs.end(); ++out) {
        if (!given(*out)) continue;
        const std::string& path = vm[*out].as<std::string>();
        for (const char* in : inputs)
            if (given(in) && same_file(path, vm[in].as<std::string>()))
                throw cli::FileUsageError(fmt::format("{} {}: the same file as the input {} {}; refusing to overwrite it",
                                                      option_label(*out), path, option_label(in),
                                                      vm[in].as<std::string>()));
        for (auto other = outputs.begin(); other != out; ++other)
            if (given(*other) && same_file(path, vm[*other].as<std::string>()))
                throw cli::FileUsageError(fmt::format("{} {}: the same file as {} {}; give each output its own file",
                                                      option_label(*out), path, option_label(*other),
                                                      vm[*other].as<std::string>()));
    }
}

} // namespace timersim
