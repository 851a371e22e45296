// WheelSpec: the geometry of a configurable hierarchical timer wheel, as a
// small value type, and WheelGeometry, that spec made concrete for one HZ.
// The two kernel wheels are two points of this space (presets below); the
// queues are wheel/configurable/cascading_wheel.hpp and wheel/configurable/in_place_wheel.hpp.
//
//   auto spec = parse_wheel_spec("wheel:modern:bits=5x8");   // or throws WheelSpecError
//   WheelGeometry g = spec.geometry(250);
//   InPlaceWheel q(InPlaceWheel::Config{.hz = 250, .geometry = g});
//
// Parameters (per level L = 0 .. depth-1):
//   bits[L]   2^bits[L] buckets at level L
//   shift[L]  log2 of level L's granularity in jiffies (level 0: the base
//             granularity, normally 0 = one jiffy). Between two levels the
//             clock shift is shift[L+1] - shift[L].
//   mode      cascade: a timer is placed by its distance and moved down one
//             level at a time as that distance shrinks (Linux <= 4.7);
//             in-place: placed once, expired from the bucket it was put in
//             (Linux 4.8+), the clock of level L+1 advancing once per
//             2^(clock shift) clocks of level L.
//   round     down: a bucket holds the expiries at or after its time (a
//             cascading wheel re-places them, so it stays exact; in place,
//             a timer fires up to one granularity EARLY); up: a bucket holds
//             the expiries before its time (6.1 calc_index(): never early,
//             up to one granularity late; cascading, each timer is moved at
//             most once, straight to the run list).
//
// Spec strings (the --design argument):
//   wheel:PRESET[:KEY=VALUE]...     or     wheel:KEY=VALUE[:KEY=VALUE]...
//   bits=8/6/6/6/6 or bits=6x9      buckets per level (log2), one per level or BxN
//   shift=3 or shift=8/6/6/6        clock shift between consecutive levels
//                                   (one value for all); cascade: always the
//                                   lower level's bits
//   base=G                          level 0 granularity 2^G jiffies (in-place)
//   depth=N or depth=hz             number of levels (hz: 6.1 LVL_DEPTH, one
//                                   level fewer at HZ <= 100)
//   mode=cascade|in-place   round=up|down (default: up in place, down cascading)
// Presets: see wheel_presets().
#pragma once

#include "wheel/core/jiffies.hpp"

#include <array>
#include <cstdint>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

namespace timersim {

inline constexpr unsigned kMaxWheelLevels = 9;

enum class WheelMode : std::uint8_t { cascade, in_place };
enum class WheelRound : std::uint8_t { down, up };

struct WheelSpecError : std::invalid_argument {
    using std::invalid_argument::invalid_argument;
};

// A concrete geometry: what the queues are built from. Checked by validate().
struct WheelGeometry {
    WheelMode mode = WheelMode::in_place;
    WheelRound round = WheelRound::up;
    unsigned depth = 0;
    std::array<std::uint8_t, kMaxWheelLevels> bits{};  // log2 buckets per level
    std::array<std::uint8_t, kMaxWheelLevels> shift{}; // log2 granularity per level

    constexpr unsigned slots(unsigned level) const noexcept { return 1u << bits[level]; }
    constexpr Jiffies granularity(unsigned level) const noexcept { return Jiffies{1} << shift[level]; }
    // First bucket of `level` in the flat bucket array (6.1 LVL_OFFS()).
    constexpr unsigned offset(unsigned level) const noexcept {
        unsigned o = 0;
        for (unsigned l = 0; l < level; ++l) o += slots(l);
        return o;
    }
    constexpr unsigned buckets() const noexcept { return offset(depth); }

    // In place: the smallest delta of `level` (6.1 LVL_START(): all but one
    // bucket of the level below, so a rounded-up expiry never lands in the
    // bucket the clock is in). LVL_START(depth) is the cutoff.
    constexpr Jiffies level_start(unsigned level) const noexcept {
        return level == 0 ? 0 : Jiffies{slots(level - 1) - 1} << shift[level - 1];
    }
    constexpr Jiffies cutoff() const noexcept { return level_start(depth); }
    // WHEEL_TIMEOUT_MAX: what a delta at or beyond the cutoff is clamped to.
    constexpr Jiffies timeout_max() const noexcept { return cutoff() - granularity(depth - 1); }

    // Cascade: the smallest delta that no longer fits `level` (classic
    // range_end; one bucket less when rounding up, for the same reason as
    // LVL_START), and the largest delta the last level represents (MAX_TVAL).
    constexpr Jiffies range_end(unsigned level) const noexcept {
        const Jiffies span = Jiffies{1} << (shift[level] + bits[level]);
        return round == WheelRound::up && level > 0 ? span - granularity(level) : span;
    }
    constexpr Jiffies max_tval() const noexcept { return range_end(depth - 1) - 1; }

    // Throws WheelSpecError when the queues cannot run this geometry.
    void validate() const;
    friend bool operator==(const WheelGeometry&, const WheelGeometry&) = default;
};

// What the user asked for, before HZ is known (depth=hz).
struct WheelSpec {
    std::string preset; // the preset it started from ("" for none)
    bool modified = false; // keys changed the preset
    WheelMode mode = WheelMode::in_place;
    WheelRound round = WheelRound::up;
    std::vector<std::uint8_t> bits;         // one per level
    std::vector<std::uint8_t> clock_shift;  // between consecutive levels (in-place)
    std::uint8_t base_shift = 0;            // level 0 granularity (in-place)
    bool depth_by_hz = false;               // 6.1 LVL_DEPTH: one level fewer at HZ <= 100

    WheelGeometry geometry(unsigned hz) const; // validated
    friend bool operator==(const WheelSpec&, const WheelSpec&) = default;
};

struct WheelPreset {
    std::string_view name;
    std::string_view spec;   // the keys it stands for
    std::string_view source; // where the geometry comes from
};
const std::vector<WheelPreset>& wheel_presets();

// "wheel:..." (the "wheel:" prefix is optional). Throws WheelSpecError.
WheelSpec parse_wheel_spec(std::string_view text);
// The `classic` preset's geometry, Linux <= 4.7's tv1..tv5 (the same at
// every HZ: the preset has no depth=hz).
WheelGeometry classic_wheel_geometry();
// The canonical spec string: "wheel:PRESET" for an unchanged preset, else
// every key spelled out; parse_wheel_spec(to_string(s)) gives s's geometry.
std::string to_string(const WheelSpec& spec);
// Every key spelled out, for one HZ.
std::string to_string(const WheelGeometry& g);

} // namespace timersim
