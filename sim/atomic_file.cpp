#include "sim/atomic_file.hpp"

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <stdexcept>
#include <string>
#include <unistd.h>

namespace timersim {

void write_file_atomically(const std::string& path, std::string_view content) {
    const std::string tmp = path + ".tmp." + std::to_string(::getpid());
    auto fail = [&](const char* what) {
        const std::string reason = std::strerror(errno);
        std::remove(tmp.c_str());
        throw std::runtime_error(path + ": cannot " + what + " (" + reason + ")");
    };
    std::FILE* f = std::fopen(tmp.c_str(), "wb");
    if (!f) fail("create file");
    const bool written = std::fwrite(content.data(), 1, content.size(), f) == content.size();
    const bool flushed = std::fflush(f) == 0 && ::fsync(::fileno(f)) == 0;
    if (std::fclose(f) != 0 || !written || !flushed) fail("write file");
    if (std::rename(tmp.c_str(), path.c_str()) != 0) fail("rename temporary file into place");
}

} // namespace timersim
