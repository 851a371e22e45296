// The one JSON escaping function (sim/report/json.hpp), checked by another
// JSON implementation: python3's json module must read back exactly the
// strings we wrote, every control character, quote and backslash included.
#include "sim/report/json.hpp"

#include <doctest/doctest.h>
#include <fmt/core.h>

#include <unistd.h>

#include <cstdio>
#include <limits>
#include <string>
#include <vector>

using namespace timersim;

namespace {

// Runs `python3 -c program` with `input` on its standard input; returns what it printed.
std::string python(const std::string& program, const std::string& input) {
    const std::string path = fmt::format("/tmp/timersim-test-json-{}.json", static_cast<long>(::getpid()));
    std::FILE* f = std::fopen(path.c_str(), "w");
    REQUIRE(f);
    std::fwrite(input.data(), 1, input.size(), f);
    std::fclose(f);
    std::FILE* p = ::popen(fmt::format("python3 -c '{}' < {}", program, path).c_str(), "r");
    REQUIRE(p);
    std::string out;
    char buf[4096];
    for (std::size_t n; (n = std::fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
    CHECK(::pclose(p) == 0);
    std::remove(path.c_str());
    return out;
}

} // namespace

TEST_CASE("json_string: python3's json module reads back every control character, quote and backslash") {
    std::vector<std::string> strings;
    for (int c = 0; c < 0x20; ++c) strings.push_back(fmt::format("a{}b", static_cast<char>(c)));
    strings.push_back("\"quoted\" \\ back\\slash / slash \x7f del");
    strings.push_back("caf\xc3\xa9 \xe2\x86\x92 utf-8");
    std::string doc = "[";
    for (std::size_t i = 0; i < strings.size(); ++i) doc += (i ? ", " : "") + json_string(strings[i]);
    doc += "]";
    // Python prints each decoded string's code points, one line per string.
    const std::string printed =
        python("import json,sys\nfor s in json.load(sys.stdin): print(\" \".join(str(ord(c)) for c in s))", doc);
    std::string expected;
    for (const std::string& s : strings) {
        std::string line;
        // Decode our own UTF-8 input to code points (two- and three-byte forms occur above).
        for (std::size_t i = 0; i < s.size();) {
            const auto b = static_cast<unsigned char>(s[i]);
            unsigned cp = b;
            std::size_t len = 1;
            if (b >= 0xe0) cp = b & 0x0f, len = 3;
            else if (b >= 0xc0) cp = b & 0x1f, len = 2;
            for (std::size_t k = 1; k < len; ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3f);
            line += (line.empty() ? "" : " ") + std::to_string(cp);
            i += len;
        }
        expected += line + "\n";
    }
    CHECK(printed == expected);
}

TEST_CASE("json_string: invalid UTF-8 becomes U+FFFD, never raw bytes in the document") {
    const std::string s = json_string("bad \xff byte");
    CHECK(s == "\"bad \xef\xbf\xbd byte\"");
}

TEST_CASE("json_number: finite values in shortest form, the rest as null") {
    CHECK(json_number(0.05) == "0.05");
    CHECK(json_number(1.5) == "1.5");
    CHECK(json_number(std::numeric_limits<double>::infinity()) == "null");
    CHECK(json_number(std::numeric_limits<double>::quiet_NaN()) == "null");
}
