// Reading a test fixture that is committed xz-compressed (the kernel
// captures in tests/data/kernel/): decompressed in-process by InputFile, as
// timersim itself reads it.
#pragma once

#include "workloads/traces/input/input_file.hpp"

#include <doctest/doctest.h>

#include <filesystem>
#include <string>

namespace timersim::test {

inline std::string read_xz(const std::filesystem::path& path) {
    InputFile in(path.string());
    REQUIRE(in.compression() == Compression::xz);
    std::string text = in.read_all();
    REQUIRE(!text.empty());
    return text;
}

} // namespace timersim::test
