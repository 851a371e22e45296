#include "sim/sweep/sweep_grid.hpp"

#include "wheel/core/clock.hpp"
#include "workloads/traces/input/input_file.hpp"

#include <fmt/core.h>

#include <charconv>
#include <fstream>

namespace timersim::sweep {

namespace {

std::string_view trim(std::string_view s) {
    while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
    while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
    return s;
}

// A cell travels as one shell-quoted argument split on spaces: no value may
// hold a space or a quote.
void check_word(std::string_view v, const std::string& where) {
    if (v.empty()) throw GridError(fmt::format("{}: empty value", where));
    for (char c : v)
        if (c == ' ' || c == '\t' || c == '\'' || c == '"' || c == '\\' || c == '\n')
            throw GridError(fmt::format("{}: '{}': no spaces, quotes or backslashes in a grid value", where, v));
}

std::vector<std::string> split_list(std::string_view v, const std::string& where) {
    std::vector<std::string> out;
    while (true) {
        const auto comma = v.find(',');
        const std::string_view item = trim(v.substr(0, comma));
        check_word(item, where);
        out.emplace_back(item);
        if (comma == std::string_view::npos) return out;
        v.remove_prefix(comma + 1);
    }
}

std::uint64_t number(std::string_view v, const std::string& where, std::uint64_t max) {
    std::uint64_t n = 0;
    const auto [end, ec] = std::from_chars(v.data(), v.data() + v.size(), n);
    if (v.empty() || ec != std::errc{} || end != v.data() + v.size() || n > max)
        throw GridError(fmt::format("{}: expected a number 0..{}, got '{}'", where, max, v));
    return n;
}

// FNV-1a, 64 bits: a cell's id, the same on every machine.
std::string hash_id(std::string_view s) {
    std::uint64_t h = 0xcbf29ce484222325ull;
    for (unsigned char c : s) {
        h ^= c;
        h *= 0x100000001b3ull;
    }
    return fmt::format("{:016x}", h);
}

// The parameter name as an option (no dashes, a known shape).
std::string option_name(std::string_view name, const std::string& where) {
    if (name.empty() || name.starts_with("-"))
        throw GridError(fmt::format("{}: '{}': give the run option without dashes", where, name));
    for (const char* fixed : {"design", "hz", "workload", "seed", "duration", "ticks"})
        if (name == fixed) throw GridError(fmt::format("{}: '{}' is a grid axis of its own", where, name));
    if (name == "help" || name == "h") throw GridError(fmt::format("{}: '{}' is not a run option of a cell", where, name));
    check_word(name, where);
    return std::string(name);
}

} // namespace

void apply_grid_key(Grid& g, std::string_view key, std::string_view value, const std::string& where) {
    value = trim(value);
    if (key == "design") {
        g.designs = split_list(value, where);
    } else if (key == "hz") {
        g.hz.clear();
        for (const std::string& h : split_list(value, where)) {
            const auto n = static_cast<unsigned>(number(h, where, kMaxHz));
            if (!valid_hz(n)) throw GridError(fmt::format("{}: HZ must be 1..{}", where, kMaxHz));
            g.hz.push_back(n);
        }
    } else if (key == "workload") {
        g.workloads.clear();
        for (std::string w : split_list(value, where)) {
            for (char& c : w)
                if (c == '+') c = ',';
            g.workloads.push_back(w);
        }
    } else if (key == "seed") {
        g.seeds.clear();
        for (const std::string& s : split_list(value, where)) {
            if (const auto dots = s.find(".."); dots != std::string::npos) {
                const std::uint64_t lo = number(s.substr(0, dots), where, ~0ull), hi = number(s.substr(dots + 2), where, ~0ull);
                if (hi < lo || hi - lo >= 100000) throw GridError(fmt::format("{}: bad seed range '{}'", where, s));
                for (std::uint64_t x = lo; x <= hi; ++x) g.seeds.push_back(x);
            } else {
                g.seeds.push_back(number(s, where, ~0ull));
            }
        }
    } else if (key == "param") {
        const auto eq = value.find('=');
        if (eq == std::string_view::npos) throw GridError(fmt::format("{}: expected NAME=V1,V2,...", where));
        g.params.emplace_back(option_name(trim(value.substr(0, eq)), where), split_list(value.substr(eq + 1), where));
    } else if (key == "set") {
        const auto eq = value.find('=');
        const std::string name = option_name(trim(value.substr(0, eq)), where);
        std::string v;
        if (eq != std::string_view::npos) {
            v = std::string(trim(value.substr(eq + 1)));
            check_word(v, where);
        }
        g.sets.emplace_back(name, v);
    } else if (key == "duration") {
        check_word(value, where);
        g.duration = std::string(value);
    } else {
        throw GridError(fmt::format("{}: unknown key '{}' (design, hz, workload, seed, param, set, duration)", where, key));
    }
}

Grid parse_grid_file(const std::string& path) {
    std::ifstream in(path);
    if (!in) throw InputError(fmt::format("{}: cannot open the grid file", path));
    Grid g;
    std::string line;
    for (unsigned n = 1; std::getline(in, line); ++n) {
        std::string_view l = line;
        if (const auto hash = l.find('#'); hash != std::string_view::npos) l = l.substr(0, hash);
        l = trim(l);
        if (l.empty()) continue;
        const auto eq = l.find('=');
        if (eq == std::string_view::npos)
            throw GridError(fmt::format("{}:{}: expected KEY = VALUE", path, n));
        const std::string_view key = trim(l.substr(0, eq));
        apply_grid_key(g, key, l.substr(eq + 1), fmt::format("{}:{}: {}", path, n, key));
    }
    return g;
}

std::vector<Cell> expand(const Grid& g) {
    // Parameter combinations, first parameter outermost.
    std::vector<std::vector<std::pair<std::string, std::string>>> combos{{}};
    for (const auto& [name, values] : g.params) {
        std::vector<std::vector<std::pair<std::string, std::string>>> next;
        for (const auto& c : combos)
            for (const std::string& v : values) {
                next.push_back(c);
                next.back().emplace_back(name, v);
            }
        combos = std::move(next);
    }
    std::vector<Cell> cells;
    for (const std::string& design : g.designs)
        for (const unsigned hz : g.hz)
            for (const std::string& workload : g.workloads)
                for (const auto& combo : combos)
                    for (const std::uint64_t seed : g.seeds) {
                        Cell c;
                        c.design = design;
                        c.workload = workload;
                        c.hz = hz;
                        c.seed = seed;
                        c.args = {"--design", design, "--hz", std::to_string(hz), "--workload", workload,
                                  "--seed", std::to_string(seed), "--duration", g.duration};
                        for (const auto& [name, v] : combo) {
                            c.args.push_back("--" + name);
                            c.args.push_back(v);
                        }
                        for (const auto& [name, v] : g.sets) {
                            c.args.push_back("--" + name);
                            if (!v.empty()) c.args.push_back(v);
                        }
                        for (std::size_t i = 0; i < c.args.size(); ++i) {
                            c.line += (i ? " " : "") + c.args[i];
                            if (i >= 10) c.options += (i > 10 ? " " : "") + c.args[i];
                        }
                        c.id = hash_id(c.line);
                        cells.push_back(std::move(c));
                    }
    return cells;
}

Cell cell_from_line(const std::string& line) {
    // The line's own fields, re-expanded through a one-cell grid, must give
    // the same line back: then it is a cell of some grid, in canonical order.
    std::vector<std::string> words;
    std::string_view rest = line;
    while (!rest.empty()) {
        const auto sp = rest.find(' ');
        words.emplace_back(rest.substr(0, sp));
        if (sp == std::string_view::npos) break;
        rest.remove_prefix(sp + 1);
    }
    auto bad = [&] { return GridError(fmt::format("--cell: '{}' is not a line --emit-jobs writes", line)); };
    if (words.size() < 10 || words[0] != "--design" || words[2] != "--hz" || words[4] != "--workload" ||
        words[6] != "--seed" || words[8] != "--duration")
        throw bad();
    Grid g;
    g.designs = {words[1]};
    g.hz = {static_cast<unsigned>(number(words[3], "--cell: --hz", kMaxHz))};
    g.workloads = {words[5]};
    g.seeds = {number(words[7], "--cell: --seed", ~0ull)};
    g.duration = words[9];
    // The rest are options: "--name value" or a switch "--name" (followed by
    // another option). Which were swept is not known here: all count as set.
    for (std::size_t i = 10; i < words.size(); ++i) {
        if (!words[i].starts_with("--")) throw bad();
        const std::string name = words[i].substr(2);
        if (i + 1 < words.size() && !words[i + 1].starts_with("--"))
            g.sets.emplace_back(name, words[++i]);
        else
            g.sets.emplace_back(name, "");
    }
    Cell c = expand(g).front();
    if (c.line != line) throw bad();
    return c;
}

} // namespace timersim::sweep
