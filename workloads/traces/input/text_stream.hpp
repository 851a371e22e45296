// An std::istream over text already in memory, without copying it
// (std::istringstream copies its string). For the second pass over a kernel
// trace whose first pass found its HZ (hz_inference.hpp).
#pragma once

#include <istream>
#include <streambuf>
#include <string_view>

namespace timersim {

class TextStream : private std::streambuf, public std::istream {
public:
    // `text` must outlive the stream.
    explicit TextStream(std::string_view text) : std::istream(static_cast<std::streambuf*>(this)) {
        char* p = const_cast<char*>(text.data()); // only read: get area of an input-only buffer
        setg(p, p, p + text.size());
    }
};

} // namespace timersim
