#include "wheel/configurable/wheel_spec.hpp"

#include <algorithm>
#include <charconv>
#include <optional>

namespace timersim {

namespace {

[[noreturn]] void fail(const std::string& what) { throw WheelSpecError(what); }

unsigned parse_number(std::string_view key, std::string_view v, unsigned lo, unsigned hi) {
    unsigned n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc{} || end != v.data() + v.size() || n < lo || n > hi)
        fail(std::string(key) + ": '" + std::string(v) + "' is not a number in " + std::to_string(lo) + ".." +
             std::to_string(hi));
    return n;
}

// "8/6/6/6/6" or "6x9" (six bits, nine times).
std::vector<std::uint8_t> parse_list(std::string_view key, std::string_view v, unsigned lo, unsigned hi) {
    std::vector<std::uint8_t> out;
    if (const auto x = v.find('x'); x != std::string_view::npos) {
        const unsigned value = parse_number(key, v.substr(0, x), lo, hi);
        const unsigned times = parse_number(key, v.substr(x + 1), 1, kMaxWheelLevels);
        out.assign(times, static_cast<std::uint8_t>(value));
        return out;
    }
    while (true) {
        const auto slash = v.find('/');
        out.push_back(static_cast<std::uint8_t>(parse_number(key, v.substr(0, slash), lo, hi)));
        if (out.size() > kMaxWheelLevels) fail(std::string(key) + ": more than 9 levels");
        if (slash == std::string_view::npos) return out;
        v.remove_prefix(slash + 1);
    }
}

std::string join(const std::vector<std::uint8_t>& v) {
    std::string s;
    for (std::size_t i = 0; i < v.size(); ++i) s += (i ? "/" : "") + std::to_string(v[i]);
    return s;
}

// One KEY=VALUE; `depth` is applied after all keys (it may come before bits).
void apply_key(WheelSpec& s, std::string_view item, std::optional<unsigned>& depth) {
    const auto eq = item.find('=');
    if (eq == std::string_view::npos) fail("'" + std::string(item) + "' is neither a preset nor KEY=VALUE");
    const std::string_view key = item.substr(0, eq), v = item.substr(eq + 1);
    if (key == "bits") {
        s.bits = parse_list(key, v, 1, 16);
    } else if (key == "shift") {
        s.clock_shift = parse_list(key, v, 1, 16);
    } else if (key == "base") {
        s.base_shift = static_cast<std::uint8_t>(parse_number(key, v, 0, 16));
    } else if (key == "depth") {
        s.depth_by_hz = v == "hz";
        depth = s.depth_by_hz ? std::nullopt : std::optional(parse_number(key, v, 1, kMaxWheelLevels));
    } else if (key == "mode") {
        if (v != "cascade" && v != "in-place") fail("mode: '" + std::string(v) + "' (choose cascade or in-place)");
        s.mode = v == "cascade" ? WheelMode::cascade : WheelMode::in_place;
    } else if (key == "round") {
        if (v != "up" && v != "down") fail("round: '" + std::string(v) + "' (choose up or down)");
        s.round = v == "up" ? WheelRound::up : WheelRound::down;
    } else {
        fail("unknown key '" + std::string(key) + "' (bits, shift, base, depth, mode, round)");
    }
}

} // namespace

const std::vector<WheelPreset>& wheel_presets() {
    static const std::vector<WheelPreset> presets = {
        {"classic", "mode=cascade:round=down:bits=8/6/6/6/6",
         "Linux 2.6 .. 4.7 kernel/timer.c (TVR_BITS 8, TVN_BITS 6): the cascading wheel"},
        {"classic-small", "mode=cascade:round=down:bits=6/4/4/4/4",
         "the same with CONFIG_BASE_SMALL (TVR_BITS 6, TVN_BITS 4)"},
        {"modern", "mode=in-place:round=up:bits=6x9:shift=3:depth=hz",
         "Linux 4.8+ as in 6.1 kernel/time/timer.c (LVL_BITS 6, LVL_CLK_SHIFT 3, LVL_DEPTH 9, 8 at HZ <= 100)"},
        {"rfc-2015", "mode=in-place:round=up:bits=5x8:shift=3",
         "T. Gleixner's 2015 draft as LWN 646950 (3 Jun 2015) describes it: 8 levels of 32 buckets, x8 per level"},
        {"v2-2016", "mode=in-place:round=up:bits=6x8:shift=3:base=2",
         "[patch V2 00/20] (17 Jun 2016) at HZ=1000: level 0 of 4 ms, ~6 day cutoff; reconstructed from the cover "
         "letter's figures, not from the patch's code"},
        {"spelvin-2016", "mode=in-place:round=up:bits=5x9:shift=2",
         "George Spelvin's alternative on LKML (14 Jun 2016, re: patch 13/20): 32 buckets x 9 levels, x4 per level"},
    };
    return presets;
}

WheelSpec parse_wheel_spec(std::string_view text) {
    if (text.starts_with("wheel:")) text.remove_prefix(6);
    else if (text == "wheel") text = {};
    if (text.empty()) fail("empty wheel spec (give a preset or bits=...)");
    WheelSpec s;
    std::optional<unsigned> depth;
    bool first = true, round_given = false;
    while (!text.empty()) {
        const auto colon = text.find(':');
        const std::string_view item = text.substr(0, colon);
        text = colon == std::string_view::npos ? std::string_view{} : text.substr(colon + 1);
        if (item.empty()) fail("empty field in wheel spec");
        if (first && item.find('=') == std::string_view::npos) {
            const auto& presets = wheel_presets();
            const auto it = std::find_if(presets.begin(), presets.end(), [&](const WheelPreset& p) { return p.name == item; });
            if (it == presets.end()) {
                std::string names;
                for (const auto& p : presets) names += (names.empty() ? "" : ", ") + std::string(p.name);
                fail("unknown preset '" + std::string(item) + "' (choose from " + names + ")");
            }
            WheelSpec p = parse_wheel_spec(it->spec);
            p.preset = std::string(it->name);
            s = p;
            first = false;
            continue;
        }
        round_given = round_given || item.starts_with("round=");
        apply_key(s, item, depth);
        s.modified = true;
        first = false;
    }
    if (s.bits.empty()) fail("bits: missing (give a preset or bits=...)");
    // Without a preset or round=, a cascading wheel rounds down (exact, as 4.x).
    if (s.preset.empty() && s.mode == WheelMode::cascade && !round_given) s.round = WheelRound::down;
    if (depth) {
        // depth=N keeps the first N levels, or repeats the last one.
        s.bits.resize(*depth, s.bits.back());
        if (!s.clock_shift.empty() && s.clock_shift.size() > 1)
            s.clock_shift.resize(*depth > 1 ? *depth - 1 : 1, s.clock_shift.back());
    }
    if (s.preset.empty()) s.modified = false;
    return s;
}

WheelGeometry WheelSpec::geometry(unsigned hz) const {
    WheelGeometry g;
    g.mode = mode;
    g.round = round;
    g.depth = static_cast<unsigned>(bits.size());
    if (depth_by_hz && hz <= 100 && g.depth > 1) --g.depth;
    for (unsigned l = 0; l < g.depth; ++l) g.bits[l] = bits[l];
    if (mode == WheelMode::cascade) {
        if (!clock_shift.empty()) fail("shift: a cascading wheel's clock shift is the lower level's bits; leave it out");
        if (base_shift != 0) fail("base: a cascading wheel runs level 0 one jiffy at a time; leave it out");
        for (unsigned l = 1; l < g.depth; ++l) g.shift[l] = static_cast<std::uint8_t>(g.shift[l - 1] + g.bits[l - 1]);
    } else {
        if (clock_shift.size() > 1 && clock_shift.size() != bits.size() - 1)
            fail("shift: " + std::to_string(clock_shift.size()) + " values for " + std::to_string(bits.size()) +
                 " levels (give one, or one per pair of levels)");
        const std::uint8_t uniform = clock_shift.empty() ? 3 : clock_shift.front();
        g.shift[0] = base_shift;
        for (unsigned l = 1; l < g.depth; ++l)
            g.shift[l] = static_cast<std::uint8_t>(g.shift[l - 1] + (clock_shift.size() > 1 ? clock_shift[l - 1] : uniform));
    }
    g.validate();
    return g;
}

void WheelGeometry::validate() const {
    if (depth < 1 || depth > kMaxWheelLevels) fail("depth: 1..9 levels");
    if (mode == WheelMode::cascade) {
        // Cascade counters are kept per 1-based level, up to kMaxLevels - 1.
        if (depth > kMaxWheelLevels - 1) fail("depth: a cascading wheel has at most 8 levels");
        if (shift[depth - 1] + bits[depth - 1] > 62) fail("bits: the levels together span more than 2^62 jiffies");
        if (buckets() + 2 > 0xFFFF) fail("bits: more than 65533 buckets");
        return;
    }
    for (unsigned l = 0; l < depth; ++l)
        if (bits[l] > 6) fail("bits: an in-place level has at most 64 buckets (6 bits): one bitmap word");
    for (unsigned l = 1; l < depth; ++l) {
        // A level must be coarser than the one below, and the one below must
        // reach past one of its buckets, or deltas fall between the levels.
        const unsigned step = shift[l] - shift[l - 1];
        if (step < 1 || step >= bits[l - 1])
            fail("shift: the clock shift between levels " + std::to_string(l - 1) + " and " + std::to_string(l) +
                 " must be 1 .. bits-1 of level " + std::to_string(l - 1));
    }
    if (shift[depth - 1] + bits[depth - 1] > 40) fail("bits: the levels together span more than 2^40 jiffies");
}

std::string to_string(const WheelGeometry& g) {
    std::vector<std::uint8_t> bits(g.bits.begin(), g.bits.begin() + g.depth);
    std::string s = std::string("wheel:mode=") + (g.mode == WheelMode::cascade ? "cascade" : "in-place") +
                    ":round=" + (g.round == WheelRound::up ? "up" : "down") + ":bits=" + join(bits);
    if (g.mode == WheelMode::in_place) {
        std::vector<std::uint8_t> steps;
        for (unsigned l = 1; l < g.depth; ++l) steps.push_back(static_cast<std::uint8_t>(g.shift[l] - g.shift[l - 1]));
        if (!steps.empty()) s += ":shift=" + join(steps);
        if (g.shift[0] != 0) s += ":base=" + std::to_string(g.shift[0]);
    }
    return s;
}

std::string to_string(const WheelSpec& spec) {
    if (!spec.preset.empty() && !spec.modified) return "wheel:" + spec.preset;
    std::string s = std::string("wheel:mode=") + (spec.mode == WheelMode::cascade ? "cascade" : "in-place") +
                    ":round=" + (spec.round == WheelRound::up ? "up" : "down") + ":bits=" + join(spec.bits);
    if (!spec.clock_shift.empty()) s += ":shift=" + join(spec.clock_shift);
    if (spec.base_shift != 0) s += ":base=" + std::to_string(spec.base_shift);
    if (spec.depth_by_hz) s += ":depth=hz";
    return s;
}

// Any HZ gives the same geometry: `classic` has no depth=hz.
WheelGeometry classic_wheel_geometry() { return parse_wheel_spec("wheel:classic").geometry(250); }

} // namespace timersim
