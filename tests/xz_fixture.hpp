// Reading a test fixture that is committed xz-compressed (the kernel
// captures in tests/data/kernel/): decompressed with the xz tool.
#pragma once

#include <doctest/doctest.h>

#include <cstdio>
#include <filesystem>
#include <string>

namespace timersim::test {

inline std::string read_xz(const std::filesystem::path& path) {
    const std::string command = "xz -dc -- '" + path.string() + "'";
    std::FILE* pipe = ::popen(command.c_str(), "r");
    REQUIRE(pipe != nullptr);
    std::string text;
    char buffer[1 << 16];
    std::size_t n;
    while ((n = std::fread(buffer, 1, sizeof buffer, pipe)) > 0) text.append(buffer, n);
    REQUIRE(::pclose(pipe) == 0);
    REQUIRE(!text.empty());
    return text;
}

} // namespace timersim::test
