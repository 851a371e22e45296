// Malformed-input corpora: every file of a folder names, on its first line
// "# expect: LINE: message (field)", the one error its reader must report.
// check_error_corpus() runs a reader over each file and compares what() with
// "FILE:" + that expectation, so both trace readers' corpora share one loop.
#pragma once

#include "workloads/traces/input/trace_error.hpp"

#include <doctest/doctest.h>

#include <algorithm>
#include <cstddef>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

namespace timersim::testing {

// read_all(std::istream&, const std::string& name) must consume the whole
// input through the reader under test, letting TraceError escape.
template <class ReadAll>
void check_error_corpus(const std::filesystem::path& dir, const std::string& extension, std::size_t at_least,
                        ReadAll read_all) {
    std::vector<std::filesystem::path> files;
    for (const auto& entry : std::filesystem::directory_iterator(dir))
        if (entry.path().extension() == extension) files.push_back(entry.path());
    std::sort(files.begin(), files.end());
    REQUIRE(files.size() >= at_least);
    for (const auto& path : files) {
        const std::string name = path.filename().string();
        CAPTURE(name);
        std::ifstream in(path, std::ios::binary);
        std::string first;
        std::getline(in, first);
        if (!first.empty() && first.back() == '\r') first.pop_back();
        REQUIRE(first.starts_with("# expect: "));
        const std::string expected = name + ":" + first.substr(10);
        in.seekg(0);
        std::string actual;
        try {
            read_all(in, name);
        } catch (const TraceError& e) {
            actual = e.what();
        }
        CHECK(actual == expected);
    }
}

} // namespace timersim::testing
