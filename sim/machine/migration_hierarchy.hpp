// The 6.9+ timer-migration hierarchy's groups for a machine of N CPUs on K
// NUMA nodes (--cpus N --numa-nodes K): which CPUs each group holds, level
// by level. The engine's pull model walks it (find_remote_targets() in
// engine_ticks_impl.hpp); docs/machine.md, "Linux 6.9 and later".
//
// The kernel's rules (6.12 kernel/time/timer_migration.c, read at commit
// 07c5b277; unchanged in this respect since 6.9):
//   * tmigr_init(): from the possible CPUs and nodes, per_node =
//     ceil(N / K); cpu levels = ceil(order_base_2(per_node) / 3) and node
//     levels = ceil(order_base_2(K) / 3) (3 = log2 of
//     TMIGR_CHILDREN_PER_GROUP, 8); tmigr_hierarchy_levels is their sum,
//     tmigr_crossnode_level the cpu levels.
//   * tmigr_get_group(): a group takes at most 8 children; below the
//     crossnode level only children of its own node.
//   * tmigr_setup_groups(), run as each CPU comes online: the CPU joins a
//     group at level 0 and, while that group is new, a group one level up,
//     and so on; it stops below a level that would hold a single group
//     (no level above a lone group) or at tmigr_hierarchy_levels.
// CPUs come online in order, so every group but a level's (or, below the
// crossnode level, a node's) newest one is full: each level is the level
// below cut into runs of 8 consecutive children, cut again where the node
// changes below the crossnode level, until a level has one group. Every
// group holds consecutive CPUs.
//
// CPUs go to nodes in contiguous blocks whose sizes differ by at most one,
// the larger first: CPU c is on node c * K / N.
#pragma once

#include <cstdint>
#include <vector>

namespace timersim {

// TMIGR_CHILDREN_PER_GROUP (6.9+ kernel/time/timer_migration.h).
inline constexpr unsigned kMigrationGroupChildren = 8;

// A group's node at and above the crossnode level (NUMA_NO_NODE).
inline constexpr unsigned kNoNumaNode = 0xFFFFFFFFu;

struct MigrationGroup {
    unsigned node = kNoNumaNode; // the node of its CPUs below the crossnode level
    unsigned first_cpu = 0;      // its CPUs: [first_cpu, end_cpu)
    unsigned end_cpu = 0;
    // Its children: CPUs at level 0, indices into the level below above it.
    unsigned first_child = 0;
    unsigned end_child = 0;
    unsigned parent = 0; // index into the level above (none at the top)
};

struct MigrationHierarchy {
    unsigned cpus = 1;
    unsigned nodes = 1;
    unsigned hierarchy_levels = 0; // tmigr_hierarchy_levels: at most this many levels
    unsigned crossnode_level = 0;  // tmigr_crossnode_level
    // levels[l]: the groups of level l in CPU order; the last level holds
    // one group. Empty on one CPU (the kernel sets nothing up on UP).
    std::vector<std::vector<MigrationGroup>> levels;
    std::vector<unsigned> group_of_cpu; // index of each CPU's level-0 group
};

// The node of `cpu` on a machine of `cpus` CPUs on `nodes` nodes.
unsigned numa_node_of(unsigned cpu, unsigned cpus, unsigned nodes) noexcept;

// Throws std::invalid_argument unless 1 <= nodes <= cpus.
MigrationHierarchy build_migration_hierarchy(unsigned cpus, unsigned nodes);

} // namespace timersim
