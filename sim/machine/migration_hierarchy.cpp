#include "sim/machine/migration_hierarchy.hpp"

#include <fmt/format.h>

#include <stdexcept>

namespace timersim {

namespace {

// ceil(log2(n)), 0 for n <= 1: the kernel's order_base_2().
unsigned order_base_2(unsigned n) noexcept {
    unsigned order = 0;
    while ((std::uint64_t{1} << order) < n) ++order;
    return order;
}

unsigned div_round_up(unsigned a, unsigned b) noexcept { return (a + b - 1) / b; }

constexpr unsigned kChildrenOrder = 3; // ilog2(kMigrationGroupChildren)
static_assert(1u << kChildrenOrder == kMigrationGroupChildren);

// One level built from the one below (`below`, as spans of CPUs with their
// node): runs of at most 8 consecutive children, of one node while
// `per_node`.
std::vector<MigrationGroup> group_level(std::vector<MigrationGroup>& below, bool per_node) {
    std::vector<MigrationGroup> level;
    for (unsigned i = 0; i < below.size(); ++i) {
        MigrationGroup& child = below[i];
        const bool fits = !level.empty() && level.back().end_child - level.back().first_child < kMigrationGroupChildren &&
                          (!per_node || level.back().node == child.node);
        if (!fits)
            level.push_back(MigrationGroup{.node = per_node ? child.node : kNoNumaNode,
                                           .first_cpu = child.first_cpu,
                                           .first_child = i});
        MigrationGroup& g = level.back();
        g.end_cpu = child.end_cpu;
        g.end_child = i + 1;
        child.parent = static_cast<unsigned>(level.size() - 1);
    }
    return level;
}

} // namespace

unsigned numa_node_of(unsigned cpu, unsigned cpus, unsigned nodes) noexcept {
    return static_cast<unsigned>(std::uint64_t{cpu} * nodes / cpus);
}

MigrationHierarchy build_migration_hierarchy(unsigned cpus, unsigned nodes) {
    if (cpus == 0) throw std::invalid_argument("the migration hierarchy needs at least one CPU");
    if (nodes == 0 || nodes > cpus)
        throw std::invalid_argument(fmt::format("NUMA nodes must be 1..{} (the CPUs), got {}", cpus, nodes));
    MigrationHierarchy h{.cpus = cpus, .nodes = nodes};
    if (cpus == 1) return h; // 6.9 tmigr_init(): nothing to do on UP
    // 6.12 tmigr_init()
    const unsigned cpu_levels = div_round_up(order_base_2(div_round_up(cpus, nodes)), kChildrenOrder);
    const unsigned node_levels = div_round_up(order_base_2(nodes), kChildrenOrder);
    h.hierarchy_levels = cpu_levels + node_levels;
    h.crossnode_level = cpu_levels;
    // The CPUs as the children of level 0 (a span of one CPU each).
    std::vector<MigrationGroup> units(cpus);
    for (unsigned c = 0; c < cpus; ++c)
        units[c] = MigrationGroup{.node = numa_node_of(c, cpus, nodes), .first_cpu = c, .end_cpu = c + 1};
    h.levels.reserve(h.hierarchy_levels);
    std::vector<MigrationGroup>* below = &units;
    // 6.12 tmigr_setup_groups(): no level above a lone group, at most
    // tmigr_hierarchy_levels.
    for (unsigned l = 0; l < h.hierarchy_levels && (l == 0 || h.levels.back().size() > 1); ++l) {
        h.levels.push_back(group_level(*below, l < h.crossnode_level));
        below = &h.levels.back();
        if (l == 0) {
            h.group_of_cpu.resize(cpus);
            for (unsigned c = 0; c < cpus; ++c) h.group_of_cpu[c] = units[c].parent;
        }
    }
    return h;
}

} // namespace timersim
