// ChunkedVector (wheel/core/chunked_vector.hpp): a sequence that grows by
// chunks and never moves its elements, checked against std::vector.
#include "wheel/core/chunked_vector.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <vector>

using namespace timersim;

TEST_CASE("a chunked vector holds what a vector holds, and its elements never move") {
    ChunkedVector<std::uint64_t, 4> chunked; // 16 a chunk: many chunk boundaries
    std::vector<std::uint64_t> plain;
    std::vector<const std::uint64_t*> addresses;
    for (std::uint64_t i = 0; i < 1000; ++i) {
        chunked.push_back(i * 7 + 1);
        plain.push_back(i * 7 + 1);
        addresses.push_back(&chunked[i]);
    }
    REQUIRE(chunked.size() == plain.size());
    for (std::size_t i = 0; i < plain.size(); ++i) {
        CHECK(chunked[i] == plain[i]);
        CHECK(&chunked[i] == addresses[i]);
    }
    chunked[500] = 3;
    plain[500] = 3;
    std::vector<std::uint64_t> walked(chunked.begin(), chunked.end());
    CHECK(walked == plain);
    CHECK(chunked.back() == plain.back());

    const ChunkedVector<std::uint64_t, 4> copy = chunked;
    CHECK(std::vector<std::uint64_t>(copy.begin(), copy.end()) == plain);
    ChunkedVector<std::uint64_t, 4> moved = std::move(chunked);
    CHECK(moved.size() == 1000);
    CHECK(&moved[999] == addresses[999]); // a move keeps the chunks

    const ChunkedVector<int, 2> listed = {1, 2, 3, 4, 5};
    CHECK(std::vector<int>(listed.begin(), listed.end()) == std::vector<int>{1, 2, 3, 4, 5});
    const ChunkedVector<int, 2> sized(6);
    CHECK(sized.size() == 6);
    CHECK(sized[5] == 0);
    CHECK(ChunkedVector<int>().empty());
}
