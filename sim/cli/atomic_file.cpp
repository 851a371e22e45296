#include "sim/cli/atomic_file.hpp"

#include <cerrno>
#include <cstring>
#include <stdexcept>
#include <unistd.h>

namespace timersim {

AtomicOutputFile::AtomicOutputFile(std::string path)
    : path_(std::move(path)), tmp_(path_ + ".tmp." + std::to_string(::getpid())) {
    file_ = std::fopen(tmp_.c_str(), "wb");
    if (!file_) throw OutputError(path_ + ": cannot create file (" + std::strerror(errno) + ")");
}

AtomicOutputFile::~AtomicOutputFile() {
    if (file_) std::fclose(file_);
    if (!committed_) std::remove(tmp_.c_str());
}

void AtomicOutputFile::fail(const char* what) {
    const std::string reason = std::strerror(errno);
    if (file_) std::fclose(file_);
    file_ = nullptr;
    std::remove(tmp_.c_str());
    throw std::runtime_error(path_ + ": cannot " + what + " (" + reason + ")");
}

void AtomicOutputFile::write(std::string_view data) {
    if (std::fwrite(data.data(), 1, data.size(), file_) != data.size()) fail("write file");
}

void AtomicOutputFile::commit() {
    if (std::fflush(file_) != 0 || ::fsync(::fileno(file_)) != 0) fail("write file");
    const int closed = std::fclose(file_);
    file_ = nullptr;
    if (closed != 0) fail("write file");
    if (std::rename(tmp_.c_str(), path_.c_str()) != 0) fail("rename temporary file into place");
    committed_ = true;
}

void write_file_atomically(const std::string& path, std::string_view content) {
    AtomicOutputFile out(path);
    out.write(content);
    out.commit();
}

} // namespace timersim
