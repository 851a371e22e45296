#include "sim/cli/plot_runner.hpp"

#include "sim/report/atomic_file.hpp"

#include <fmt/core.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <spawn.h>
#include <stdexcept>
#include <string_view>
#include <sys/wait.h>
#include <unistd.h>
#include <vector>

extern char** environ;

namespace timersim {

namespace {

constexpr const char* kInstallHint = "apt-get install python3-matplotlib";
// scripts/plot exits with this when matplotlib cannot be imported (it has
// then printed the install hint itself).
constexpr int kPlotExitNoMatplotlib = 3;

// Whether `name` is an executable on PATH: what the script's
// `#!/usr/bin/env python3` will look for.
bool on_path(std::string_view name) {
    const char* path = std::getenv("PATH");
    std::string_view dirs = path ? path : "";
    while (true) {
        const auto colon = dirs.find(':');
        const std::string_view dir = dirs.substr(0, colon);
        const auto candidate = std::filesystem::path(dir.empty() ? "." : std::string(dir)) / name;
        if (::access(candidate.c_str(), X_OK) == 0) return true;
        if (colon == std::string_view::npos) return false;
        dirs.remove_prefix(colon + 1);
    }
}

} // namespace

std::optional<std::string> find_plot_script() {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    if (ec) return std::nullopt;
    const auto script = exe.parent_path() / "timersim-plot";
    if (::access(script.c_str(), X_OK) != 0) return std::nullopt;
    return script.string();
}

void prepare_plot_dir(const std::string& dir) {
    std::error_code ec;
    std::filesystem::create_directories(dir, ec);
    if (ec) throw std::runtime_error(fmt::format("--plot: cannot create directory {} ({})", dir, ec.message()));
}

void draw_plots(const std::string& json, const std::string& dir) {
    prepare_plot_dir(dir);
    const std::string data = (std::filesystem::path(dir) / "compare.json").string();
    write_file_atomically(data, json);
    run_plot_script("timersim-plot", {"--out", dir, data});
}

void run_plot_script(const std::string& name, const std::vector<std::string>& script_args) {
    std::error_code ec;
    const auto exe = std::filesystem::read_symlink("/proc/self/exe", ec);
    const auto found = exe.parent_path() / name;
    if (ec || ::access(found.c_str(), X_OK) != 0) {
        // The build tree copies it beside the binary as a target of its own
        // (sim/meson.build): a build of the binary alone leaves it out.
        fmt::print(stderr,
                   "timersim: --plot: {} is not next to timersim ({}); plots skipped (build it: ninja -C BUILDDIR "
                   "sim/{}, or meson install)\n",
                   name, exe.parent_path().string(), name);
        return;
    }
    const std::string script = found.string();
    if (!on_path("python3")) {
        fmt::print(stderr, "timersim: --plot: python3 is not installed; plots skipped (install: {})\n", kInstallHint);
        return;
    }
    std::vector<std::string> args{script};
    args.insert(args.end(), script_args.begin(), script_args.end());
    std::vector<char*> argv;
    for (auto& a : args) argv.push_back(a.data());
    argv.push_back(nullptr);
    pid_t pid = 0;
    if (const int err = ::posix_spawn(&pid, script.c_str(), nullptr, nullptr, argv.data(), environ); err != 0)
        throw std::runtime_error(fmt::format("--plot: cannot run {} ({})", script, std::strerror(err)));
    int status = 0;
    while (::waitpid(pid, &status, 0) < 0)
        if (errno != EINTR) throw std::runtime_error(fmt::format("--plot: lost {} ({})", script, std::strerror(errno)));
    const int code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
    if (code == 0 || code == kPlotExitNoMatplotlib) return;
    throw std::runtime_error(fmt::format("--plot: {} failed (exit status {})", script, code));
}

} // namespace timersim
