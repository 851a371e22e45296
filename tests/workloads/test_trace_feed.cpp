// TraceFeed (workloads/traces/replay/trace_feed.hpp): a trace a jiffy at a time, as
// `timersim step` reads it.
#include "workloads/traces/replay/trace_feed.hpp"

#include <doctest/doctest.h>

#include <cstdio>
#include <memory>
#include <string>

using namespace timersim;

namespace {

struct MemoryFile {
    explicit MemoryFile(std::string text) : text_(std::move(text)), file(fmemopen(text_.data(), text_.size(), "r")) {
        REQUIRE(file);
    }
    ~MemoryFile() { std::fclose(file); }
    std::string text_;
    std::FILE* file;
};

} // namespace

TEST_CASE("a timer named first only as a cb= gets a label and flags of its own") {
    // g was armed before the trace began: it appears only as the callback x1
    // ran in. Dense ids: x1 0, g 1, x2 2.
    MemoryFile in("# timersim-trace v1 hz=250\n"
                  "1001 arm x1 in=1j cb=g\n"
                  "1002 arm x2 in=1j flags=deferrable\n");
    TraceFeed feed(in.file, "cb.trace");
    const Jiffies start = feed.header().start_jiffies;
    const auto& ops = feed.at(start);
    REQUIRE(ops.size() == 2);
    CHECK(ops[0].timer == 0);
    CHECK(ops[1].timer == 2);
    CHECK(ops[1].flags.deferrable);
    REQUIRE(feed.labels().size() == 3);
    CHECK(feed.labels()[0] == "x1");
    CHECK(feed.labels()[1] == "g");
    CHECK(feed.labels()[2] == "x2");
    REQUIRE(feed.first_flags().size() == 3);
    CHECK_FALSE(feed.first_flags()[1].deferrable);
    CHECK(feed.first_flags()[2].deferrable);
    CHECK(feed.at(start + 1).empty());
}

TEST_CASE("every wheel asking for the same jiffy gets the same batch, read once") {
    MemoryFile in("# timersim-trace v1 hz=250\n"
                  "0 arm a in=5j\n"
                  "4000000 arm b in=5j\n"
                  "4000001 cancel a\n"
                  "12000000 arm a in=1j\n");
    TraceFeed feed(in.file, "batch.trace");
    const Jiffies start = feed.header().start_jiffies;
    CHECK(feed.at(start).size() == 1);
    const auto& second = feed.at(start + 1);
    REQUIRE(second.size() == 2);
    CHECK(second[1].cancel);
    CHECK(&feed.at(start + 1) == &second); // the same batch again, not a new read
    CHECK(feed.at(start + 1).size() == 2);
    CHECK(feed.at(start + 2).empty());
    CHECK(feed.at(start + 3).size() == 1);
}
