// KeyIndex (workloads/traces/layouts/key_index.hpp): timer keys to dense ids
// in order of first sight, checked against a plain map on random mixes of
// dense numbers, hashed-pointer-like numbers and tokens; and its memory:
// a lone small number among hashed pointers must not size an array by it.
#include "workloads/traces/layouts/key_index.hpp"

#include <doctest/doctest.h>

#include <cstdint>
#include <map>
#include <random>
#include <string>
#include <utility>

using timersim::detail::KeyIndex;

namespace {

// The reference: ids in order of first sight, numbers and tokens apart.
struct Reference {
    std::map<std::pair<int, std::string>, std::uint32_t> ids;
    std::uint32_t id(int kind, const std::string& key, bool& added) {
        const auto [it, fresh] = ids.try_emplace({kind, key}, static_cast<std::uint32_t>(ids.size()));
        added = fresh;
        return it->second;
    }
};

} // namespace

TEST_CASE("ids follow first sight, for numbers of every size and tokens, as a map gives them") {
    for (const std::uint64_t seed : {1u, 2u, 3u, 4u}) {
        std::mt19937_64 rng(seed);
        KeyIndex index;
        Reference ref;
        for (int i = 0; i < 60000; ++i) {
            const unsigned what = rng() % 5;
            bool added = false;
            bool ref_added = false;
            if (what == 4) {
                // Tokens, short and past the slot's inline bytes.
                const std::string token = (rng() % 2 ? "0x" : "a_rather_long_timer_token_") + std::to_string(rng() % 3000);
                const std::uint32_t id = index.token(token, added);
                CHECK(id == ref.id(1, token, ref_added));
                CHECK(index.token_text(id) == token);
            } else {
                std::uint64_t n = 0;
                switch (what) {
                case 0: n = rng() % (index.size() + 50); break;  // dense, from 0 up
                case 1: n = rng() % (1u << 22); break;           // small, scattered
                case 2: n = rng() & 0xFFFFFFFFu; break;          // a hashed %p
                default: n = 0xffff888000000000ull + (rng() % 5000) * 64; break; // a kernel address
                }
                const std::uint32_t id = index.number(n, added);
                CHECK(id == ref.id(0, std::to_string(n), ref_added));
            }
            REQUIRE(added == ref_added);
            REQUIRE(index.size() == ref.ids.size());
        }
    }
}

TEST_CASE("a lone small number among hashed pointers takes one page, not an array of millions") {
    KeyIndex index;
    std::mt19937_64 rng(7);
    bool added = false;
    for (int i = 0; i < 20000; ++i) index.number(0x10000000u + (rng() & 0x7FFFFFFFu), added);
    // A %p hash that happens to be below 4M (one in a thousand do).
    const std::uint32_t lone = index.number(3935874, added);
    CHECK(added);
    CHECK(index.number(3935874, added) == lone);
    CHECK_FALSE(added);
    // 20,001 keys: the table's 32-byte slots at most three quarters empty,
    // and one 4 KB page of array (with the page list up to it).
    CHECK(index.memory_bytes() <= 4 * 32 * 20001 + 4096 + 8 * 4096);

    // Dense numbers from 0 use the array: 4 bytes a key, in whole pages.
    KeyIndex dense;
    for (std::uint64_t n = 0; n < 100000; ++n) REQUIRE(dense.number(n, added) == n);
    CHECK(dense.memory_bytes() <= 4 * (100000 + 1024) + 8 * 100 + 64 * 32);
}
