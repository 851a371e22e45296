// An EventLog (sim/machine/event_log.hpp) into memory, for the tests that
// read back what the engine logged.
#pragma once

#include "sim/machine/event_log.hpp"

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace timersim::test {

struct MemoryLog {
    char* data = nullptr;
    std::size_t size = 0;
    std::FILE* file = open_memstream(&data, &size);
    std::unique_ptr<EventLog> log = std::make_unique<EventLog>(file);
    MemoryLog() = default;
    MemoryLog(const MemoryLog&) = delete;
    MemoryLog& operator=(const MemoryLog&) = delete;
    ~MemoryLog() {
        log.reset();
        if (file) std::fclose(file);
        std::free(data);
    }
    // Everything logged so far, header first.
    std::string text() {
        log->flush();
        std::fflush(file);
        return std::string(data, size);
    }
};

// One row's fields, split at every comma (the tests' rows have no quoted
// fields).
inline std::vector<std::string> csv_fields(std::string_view line) {
    std::vector<std::string> f;
    std::size_t start = 0;
    for (std::size_t i = 0; i <= line.size(); ++i)
        if (i == line.size() || line[i] == ',') {
            f.emplace_back(line.substr(start, i - start));
            start = i + 1;
        }
    return f;
}

} // namespace timersim::test
