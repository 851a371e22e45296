// The committed kernel captures as text (tests/data/kernel/), and the edits
// validate's tests make to them: a line taken out, a line found by number.
#pragma once

#include "test_data_dir.hpp"
#include "tests/xz_fixture.hpp"

#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>

namespace timersim::test {

inline const std::filesystem::path kKernel = std::filesystem::path(TEST_DATA_DIR) / "kernel";

// A capture, committed xz-compressed; by default the 6.1 one.
inline std::string read_capture(const std::string& name = "capture-6.1-hz250.trace.xz") {
    return read_xz(kKernel / name);
}

// The offset of 1-based line `line`.
inline std::size_t line_offset(const std::string& text, std::uint64_t line) {
    std::size_t pos = 0;
    for (std::uint64_t l = 1; l < line; ++l) pos = text.find('\n', pos) + 1;
    return pos;
}

// `text` without 1-based line `line`.
inline std::string drop_line(std::string text, std::uint64_t line) {
    const std::size_t begin = line_offset(text, line);
    text.erase(begin, text.find('\n', begin) + 1 - begin);
    return text;
}

} // namespace timersim::test
