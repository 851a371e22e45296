// Output files appear whole or not at all: written to a temporary file in
// the same directory, flushed, then renamed over the target.
#pragma once

#include <string>
#include <string_view>

namespace timersim {

// Throws std::runtime_error naming the file if it cannot be written.
void write_file_atomically(const std::string& path, std::string_view content);

} // namespace timersim
