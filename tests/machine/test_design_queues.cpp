// The design registry (sim/machine/design_list.hpp) and the queues it builds
// (design_queues.hpp): every row names a design the parser knows, builds a
// queue on the clock it is given, and the options only some designs read
// reach exactly those designs.
#include "sim/machine/design_queues.hpp"

#include <doctest/doctest.h>

#include <set>
#include <string>
#include <type_traits>

using namespace timersim;

namespace {

constexpr unsigned kHz = 300;
constexpr Jiffies kStart = 4'294'000'000;

QueueParams params_at(std::optional<WheelGeometry> wheel = std::nullopt) {
    return {.hz = kHz, .start_jiffies = kStart, .classic_slack = 7, .wheel = wheel};
}

} // namespace

TEST_CASE("every row of the registry is a design the parser finds by its name and alias") {
    std::set<std::string_view> names;
    for (const DesignInfo& info : design_table()) {
        CHECK(design_from_string(info.name) == info.design);
        for (std::string_view alias : info.aliases) CHECK(design_from_string(alias) == info.design);
        CHECK(names.insert(info.name).second);
        CHECK(design_info(info.design).name == info.name);
    }
    CHECK(design_table().back().design == Design::wheel);
}

TEST_CASE("every design's queue starts on the clock it is given") {
    for (const Design d : every_design()) {
        CAPTURE(to_string(d));
        const Jiffies start = with_design_queue(d, std::nullopt, [&]<TimerQueue Q>() {
            Q queue(queue_config<Q>(params_at()));
            return queue.jiffies();
        });
        CHECK(start == kStart);
    }
}

TEST_CASE("the classic options reach the classic wheel; the others build from the clock alone") {
    const ClassicWheel::Config classic = queue_config<ClassicWheel>(params_at());
    CHECK(classic.slack == std::optional<std::int64_t>(7));
    CHECK(classic.hz == kHz);
    CHECK(queue_config<ModernWheel>(params_at()).hz == kHz);
    CHECK(queue_config<NettyWheel>(params_at()).start_jiffies == kStart);
}

TEST_CASE("the configurable wheel is the cascading or the in-place queue, as its geometry says") {
    const auto queue_of = [](const char* spec) {
        const WheelGeometry g = parse_wheel_spec(spec).geometry(kHz);
        return with_design_queue(Design::wheel, g, [&]<TimerQueue Q>() {
            Q queue(queue_config<Q>(params_at(g)));
            CHECK(queue.jiffies() == kStart);
            return std::is_same_v<Q, CascadingWheel> ? std::string("cascading")
                   : std::is_same_v<Q, InPlaceWheel> ? std::string("in place")
                                                     : std::string("other");
        });
    };
    CHECK(queue_of("wheel:classic") == "cascading");
    CHECK(queue_of("wheel:rfc-2015") == "in place");
    CHECK(queue_config<CascadingWheel>(params_at(parse_wheel_spec("wheel:classic").geometry(kHz))).slack ==
          std::optional<std::int64_t>(7));
    CHECK_THROWS_AS(with_design_queue(Design::wheel, std::nullopt, []<TimerQueue Q>() { return 0; }),
                    std::invalid_argument);
}
