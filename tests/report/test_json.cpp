// The one JSON writer and its escaping function (sim/report/json.hpp): the
// layouts write_json() gives documents, its number rule, and a check by
// another JSON implementation: python3's json module must read back exactly
// the strings we wrote, every control character, quote and backslash
// included, and the documents we wrote.
#include "sim/report/json.hpp"

#include <doctest/doctest.h>
#include <fmt/core.h>

#include <unistd.h>

#include <cstdio>
#include <cstdint>
#include <limits>
#include <stdexcept>
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

TEST_CASE("write_json: members one per line where the layout expands, on one line elsewhere") {
    ordered_json doc = ordered_json::object();
    doc["schema"] = "s.v1";
    doc["machine"] = {{"hz", 250}, {"nohz_idle", true}};
    doc["designs"] = ordered_json::array();
    for (int i = 0; i < 2; ++i) {
        ordered_json d = ordered_json::object();
        d["name"] = i ? "heap" : "classic";
        d["per_cpu"] = ordered_json::array({ordered_json{{"cpu", 0}}, ordered_json{{"cpu", 1}}});
        d["histogram"] = ordered_json::array({ordered_json::array({0, 5}), ordered_json::array({1, 2})});
        doc["designs"].push_back(d);
    }
    doc["empty"] = ordered_json::array();
    const JsonLayout layout{.expanded = {"", "/designs", "/designs/*", "/designs/*/per_cpu", "/empty"}};
    CHECK(write_json(doc, layout) == R"({
  "schema": "s.v1",
  "machine": {"hz": 250, "nohz_idle": true},
  "designs": [
    {
      "name": "classic",
      "per_cpu": [
        {"cpu": 0},
        {"cpu": 1}
      ],
      "histogram": [[0, 5], [1, 2]]
    },
    {
      "name": "heap",
      "per_cpu": [
        {"cpu": 0},
        {"cpu": 1}
      ],
      "histogram": [[0, 5], [1, 2]]
    }
  ],
  "empty": []
})");
}

TEST_CASE("write_json: an expanded array in a one-line object is indented from that object's line") {
    ordered_json doc = ordered_json::object();
    doc["lost"] = {{"resyncs", 0}, {"checks", ordered_json::array({ordered_json{{"line", 7}}})}};
    const JsonLayout layout{.expanded = {"", "/lost/checks"}};
    CHECK(write_json(doc, layout) == "{\n  \"lost\": {\"resyncs\": 0, \"checks\": [\n    {\"line\": 7}\n  ]}\n}");
}

TEST_CASE("write_json: compact, for JSON Lines") {
    ordered_json doc = {{"a", ordered_json::array({1, 2})}, {"b", ordered_json::object()}, {"c", "x"}};
    CHECK(write_json(doc, JsonLayout{.compact = true}) == R"({"a":[1,2],"b":{},"c":"x"})");
    CHECK(write_json(doc, JsonLayout{.expanded = {""}, .compact = true}) == R"({"a":[1,2],"b":{},"c":"x"})");
}

TEST_CASE("write_json: numbers by one rule, not dump()'s") {
    const ordered_json numbers = ordered_json::array(
        {1.0, 0.01, 0.002521265816819435, 1e-7, 1e20, -2.5, std::numeric_limits<double>::quiet_NaN(),
         std::numeric_limits<double>::infinity(), 0, -3, std::numeric_limits<std::uint64_t>::max()});
    CHECK(write_json(numbers, {}) ==
          "[1, 0.01, 0.002521265816819435, 1e-07, 1e+20, -2.5, null, null, 0, -3, 18446744073709551615]");
}

TEST_CASE("write_json: fixed decimals where the layout says, by path") {
    ordered_json doc = ordered_json::object();
    doc["cpus"] = ordered_json::array({ordered_json{{"mean", 1.0}, {"ratio", 1.0}}});
    doc["total"] = {{"mean", 0.0023465}, {"count", 3}};
    doc["groups"] = ordered_json::array({ordered_json{{"mean", 1.0}}});
    const JsonLayout layout{.fixed_decimals = {{"/cpus/*/mean", 6}, {"/total/mean", 1}, {"/total/count", 2}}};
    CHECK(write_json(doc, layout) ==
          R"({"cpus": [{"mean": 1.000000, "ratio": 1}], "total": {"mean": 0.0, "count": 3}, "groups": [{"mean": 1}]})");
}

TEST_CASE("write_json: strings and names through json_string(), nested values by the same rules") {
    ordered_json doc = ordered_json::object();
    doc["a\"b"] = "line\nbreak \xff";
    // As a workload hands over its parameters: a value, not JSON text.
    ordered_json params = ordered_json::object();
    params["loss"] = -0.0;
    params["f"] = "\n";
    params["connections"] = 10000u;
    doc["params"] = params;
    doc["none"] = ordered_json::object();
    CHECK(write_json(doc, {}) == "{\"a\\\"b\": \"line\\nbreak \xef\xbf\xbd\", \"params\": {\"loss\": -0, \"f\": \"\\n\", "
                                 "\"connections\": 10000}, \"none\": {}}");
    CHECK_THROWS_AS(write_json(ordered_json::binary({1, 2}), {}), std::logic_error);
}

TEST_CASE("write_json: python3's json module reads back what it wrote") {
    ordered_json doc = ordered_json::object();
    doc["s"] = "tab\there";
    doc["list"] = ordered_json::array({ordered_json{{"x", 0.5}}, ordered_json{{"x", nullptr}}});
    doc["mean"] = 2.0;
    const std::string text = write_json(doc, JsonLayout{.expanded = {"", "/list"}, .fixed_decimals = {{"/mean", 3}}});
    CHECK(python("import json,sys\nd = json.load(sys.stdin)\nprint(d[\"s\"] == \"tab\\there\", d[\"list\"], d[\"mean\"])",
                 text) == "True [{'x': 0.5}, {'x': None}] 2.0\n");
}
