#include "sim/cli/output_paths.hpp"

#include "sim/report/atomic_file.hpp"

#include <fmt/format.h>

namespace timersim::cli {

namespace {

std::string option_label(std::string_view name) {
    if (name == "output") return "-o";
    if (name == "input") return "FILE";
    return fmt::format("--{}", name);
}

} // namespace

void refuse_output_onto_input(const boost::program_options::variables_map& vm,
                              std::initializer_list<const char*> outputs, std::initializer_list<const char*> inputs) {
    const auto given = [&](const char* name) { return vm.count(name) != 0 && vm[name].as<std::string>() != "-"; };
    for (auto out = outputs.begin(); out != outputs.end(); ++out) {
        if (!given(*out)) continue;
        const std::string& path = vm[*out].as<std::string>();
        for (const char* in : inputs)
            if (given(in) && same_file(path, vm[in].as<std::string>()))
                throw FileUsageError(fmt::format("{} {}: the same file as the input {} {}; refusing to overwrite it",
                                                 option_label(*out), path, option_label(in),
                                                 vm[in].as<std::string>()));
        for (auto other = outputs.begin(); other != out; ++other)
            if (given(*other) && same_file(path, vm[*other].as<std::string>()))
                throw FileUsageError(fmt::format("{} {}: the same file as {} {}; give each output its own file",
                                                 option_label(*out), path, option_label(*other),
                                                 vm[*other].as<std::string>()));
    }
}

} // namespace timersim::cli
