// KeyIndex: maps timer keys (64-bit numbers, or tokens of up to
// kMaxTimerToken bytes) to dense ids 0, 1, 2... in order of first sight.
//
// An open-addressing table of 32-byte slots that hold the number, or the
// token's hash and (up to 18 bytes, enough for "0x" and 16 hex digits) the
// token itself, so a lookup usually touches one cache line; node-based maps
// cost several cache misses per lookup once a trace has 100k timers.
// Allocates only when a new key is added. Internal to the trace readers.
//
// Small numbers (below kDirectLimit: the TimerIds `timersim gen` writes, or
// any dense numbering) skip the table: an array indexed by the number, 4
// bytes per entry, so 100k timers take 400 KB instead of 8 MB of slots and
// a lookup is two loads that usually hit the cache. The array is made of
// 4 KB pages, each allocated when a number in it first comes: a lone small
// number among hashed kernel pointers (printed %p values are 32-bit hashes,
// a few in a thousand below 4M) costs one page, not an array of millions of
// entries up to it.
#pragma once

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <deque>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

namespace timersim::detail {

class KeyIndex {
public:
    static constexpr std::uint32_t kNone = 0xFFFFFFFFu;

    KeyIndex() : slots_(64) {}

    // The id of `number` (numbers and tokens are separate keys); `added`
    // tells whether it was new. New ids are size() at the time of the call.
    std::uint32_t number(std::uint64_t number, bool& added) {
        if (number < kDirectLimit) {
            std::uint32_t& id = direct_entry(number);
            added = id == kNone;
            if (added) id = static_cast<std::uint32_t>(size_++);
            return id;
        }
        return find_or_add(mix(number), number, Kind::number, {}, added);
    }
    std::uint32_t token(std::string_view token, bool& added) {
        const std::uint64_t h = hash(token);
        return find_or_add(mix(h), h, Kind::token, token, added);
    }

    std::size_t size() const noexcept { return size_; }
    // What the index holds (the array's pages and the table; tokens' text aside).
    std::size_t memory_bytes() const noexcept {
        const auto pages = static_cast<std::size_t>(std::count_if(direct_.begin(), direct_.end(), [](const auto& p) { return p != nullptr; }));
        return direct_.capacity() * sizeof(direct_[0]) + pages * kPage * sizeof(std::uint32_t) +
               slots_.capacity() * sizeof(Slot);
    }
    // The text of a token key (stable for the index's lifetime).
    std::string_view token_text(std::uint32_t id) const { return token_texts_[token_slot_[id]]; }

private:
    static constexpr std::uint64_t kDirectLimit = 1u << 22; // 16 MB of array at most
    static constexpr unsigned kPageShift = 10;
    static constexpr std::size_t kPage = std::size_t{1} << kPageShift; // entries: 4 KB

    // The array's entry for `number` (< kDirectLimit), its page made on first use.
    std::uint32_t& direct_entry(std::uint64_t number) {
        const std::size_t page = number >> kPageShift;
        if (page >= direct_.size()) direct_.resize(page + 1);
        std::unique_ptr<std::uint32_t[]>& p = direct_[page];
        if (!p) {
            p.reset(new std::uint32_t[kPage]); // not make_unique_for_overwrite: the playground's libc++ lacks it
            std::fill_n(p.get(), kPage, kNone);
        }
        return p[number & (kPage - 1)];
    }
    enum class Kind : std::uint8_t { empty, number, token };
    static constexpr std::size_t kInline = 18;
    struct Slot {
        std::uint64_t tag = 0;   // the number, or the token's hash
        std::uint32_t id = kNone;
        Kind kind = Kind::empty;
        std::uint8_t len = 0;    // token length
        char text[kInline] = {}; // the token, if it fits
    };
    static_assert(sizeof(Slot) == 32);

    static std::uint64_t mix(std::uint64_t x) noexcept { // splitmix64's finaliser
        x ^= x >> 30;
        x *= 0xbf58476d1ce4e5b9ull;
        x ^= x >> 27;
        x *= 0x94d049bb133111ebull;
        return x ^ (x >> 31);
    }
    static std::uint64_t hash(std::string_view s) noexcept { // FNV-1a
        std::uint64_t h = 0xcbf29ce484222325ull;
        for (const char c : s) h = (h ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
        return h;
    }

    bool matches(const Slot& s, std::uint64_t tag, Kind kind, std::string_view token) const {
        if (s.kind != kind || s.tag != tag) return false;
        if (kind == Kind::number) return true;
        if (s.len != token.size()) return false;
        if (token.size() <= kInline) return std::memcmp(s.text, token.data(), token.size()) == 0;
        return token_text(s.id) == token;
    }

    std::uint32_t find_or_add(std::uint64_t mixed, std::uint64_t tag, Kind kind, std::string_view token,
                              bool& added) {
        std::size_t mask = slots_.size() - 1;
        std::size_t i = mixed & mask;
        while (slots_[i].kind != Kind::empty) {
            if (matches(slots_[i], tag, kind, token)) {
                added = false;
                return slots_[i].id;
            }
            i = (i + 1) & mask;
        }
        added = true;
        const auto id = static_cast<std::uint32_t>(size_);
        if (kind == Kind::token) {
            token_slot_.resize(id + 1, kNone);
            token_slot_[id] = static_cast<std::uint32_t>(token_texts_.size());
            token_texts_.emplace_back(token);
        }
        ++size_;
        Slot& s = slots_[i];
        s.tag = tag;
        s.id = id;
        s.kind = kind;
        s.len = static_cast<std::uint8_t>(token.size());
        if (kind == Kind::token && token.size() <= kInline) std::memcpy(s.text, token.data(), token.size());
        if (2 * ++hashed_ > slots_.size()) grow();
        return id;
    }

    void grow() {
        std::vector<Slot> old(slots_.size() * 2);
        old.swap(slots_);
        const std::size_t mask = slots_.size() - 1;
        for (const Slot& s : old) {
            if (s.kind == Kind::empty) continue;
            const std::uint64_t mixed = mix(s.tag);
            std::size_t i = mixed & mask;
            while (slots_[i].kind != Kind::empty) i = (i + 1) & mask;
            slots_[i] = s;
        }
    }

    std::vector<Slot> slots_;
    std::vector<std::unique_ptr<std::uint32_t[]>> direct_; // numbers below kDirectLimit -> id, by page
    std::size_t size_ = 0;
    std::size_t hashed_ = 0; // keys in slots_
    std::vector<std::uint32_t> token_slot_;  // by id: index into token_texts_ (tokens only)
    std::deque<std::string> token_texts_;    // stable storage of every token
};

} // namespace timersim::detail
