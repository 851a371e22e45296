#include "sim/report/json.hpp"

#include <fmt/core.h>

#include <cmath>
#include <cstdint>
#include <optional>
#include <stdexcept>

namespace timersim {

namespace {

using Path = std::vector<std::string>;

// A layout path split at '/': "" -> {}, "/designs/*" -> {"designs", "*"}.
Path split_path(std::string_view pointer) {
    Path out;
    while (!pointer.empty()) {
        pointer.remove_prefix(1); // the '/'
        const std::size_t end = pointer.find('/');
        out.emplace_back(pointer.substr(0, end));
        pointer = end == std::string_view::npos ? std::string_view() : pointer.substr(end);
    }
    return out;
}

bool matches(const Path& pattern, const Path& path) {
    if (pattern.size() != path.size()) return false;
    for (std::size_t i = 0; i < path.size(); ++i)
        if (pattern[i] != "*" && pattern[i] != path[i]) return false;
    return true;
}

class Writer {
public:
    explicit Writer(const JsonLayout& layout) : compact_(layout.compact) {
        for (const std::string& p : layout.expanded) expanded_.push_back(split_path(p));
        for (const auto& [p, decimals] : layout.fixed_decimals) fixed_.emplace_back(split_path(p), decimals);
    }

    std::string write(const ordered_json& doc) {
        value(doc, 0);
        return std::move(out_);
    }

private:
    bool expanded_here() const {
        for (const Path& p : expanded_)
            if (matches(p, path_)) return true;
        return false;
    }

    std::optional<int> decimals_here() const {
        for (const auto& [p, decimals] : fixed_)
            if (matches(p, path_)) return decimals;
        return std::nullopt;
    }

    void indent(unsigned level) { out_.append(2 * level, ' '); }

    // `level`: expanded containers around the value, its lines' indent.
    void value(const ordered_json& v, unsigned level) {
        switch (v.type()) {
        case ordered_json::value_t::object: container(v, level, '{', '}'); return;
        case ordered_json::value_t::array: container(v, level, '[', ']'); return;
        case ordered_json::value_t::string: out_ += json_string(v.get_ref<const std::string&>()); return;
        case ordered_json::value_t::boolean: out_ += v.get<bool>() ? "true" : "false"; return;
        case ordered_json::value_t::number_integer: out_ += fmt::format("{}", v.get<std::int64_t>()); return;
        case ordered_json::value_t::number_unsigned: out_ += fmt::format("{}", v.get<std::uint64_t>()); return;
        case ordered_json::value_t::number_float: number(v.get<double>()); return;
        case ordered_json::value_t::binary: throw std::logic_error("write_json: a binary value has no JSON text");
        case ordered_json::value_t::null:
        case ordered_json::value_t::discarded: out_ += "null"; return;
        }
    }

    void number(double v) {
        const auto decimals = std::isfinite(v) ? decimals_here() : std::nullopt;
        out_ += decimals ? fmt::format("{:.{}f}", v, *decimals) : json_number(v);
    }

    void container(const ordered_json& v, unsigned level, char open, char close) {
        out_ += open;
        if (v.empty()) {
            out_ += close;
            return;
        }
        const bool expand = !compact_ && expanded_here();
        const unsigned inner = expand ? level + 1 : level;
        const char* separator = expand ? ",\n" : compact_ ? "," : ", ";
        if (expand) out_ += '\n';
        std::size_t index = 0;
        for (auto it = v.begin(); it != v.end(); ++it, ++index) {
            if (index) out_ += separator;
            if (expand) indent(inner);
            if (v.is_object()) {
                out_ += json_string(it.key());
                out_ += compact_ ? ":" : ": ";
                path_.push_back(it.key());
            } else {
                path_.push_back(std::to_string(index));
            }
            value(*it, inner);
            path_.pop_back();
        }
        if (expand) {
            out_ += '\n';
            indent(level);
        }
        out_ += close;
    }

    bool compact_;
    std::vector<Path> expanded_;
    std::vector<std::pair<Path, int>> fixed_;
    Path path_; // of the value being written
    std::string out_;
};

} // namespace

std::string write_json(const ordered_json& doc, const JsonLayout& layout) { return Writer(layout).write(doc); }

std::string json_string(std::string_view s) {
    return nlohmann::json(std::string(s)).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
}

std::string json_number(double v) { return std::isfinite(v) ? fmt::format("{}", v) : "null"; }

} // namespace timersim
