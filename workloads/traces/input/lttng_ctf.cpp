#include "workloads/traces/input/lttng_ctf.hpp"

#include "workloads/traces/input/forked_text.hpp"
#include "workloads/traces/input/lttng_events.hpp"

#include <babeltrace2/babeltrace.h>
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <charconv>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <optional>
#include <system_error>

#include <fcntl.h>
#include <sys/resource.h>
#include <unistd.h>

namespace timersim {

namespace fs = std::filesystem;

bool is_ctf_metadata(std::string_view head) noexcept {
    return head.starts_with("\x57\x1D\xD1\x75") || head.starts_with("\x75\xD1\x1D\x57") || head.starts_with("/* CTF");
}

namespace {

constexpr ForkedReader kReader{.what = "an LTTng trace (CTF)", .library = "libbabeltrace2", .reader = "LTTng trace"};

// The first bytes of a file, empty if it cannot be read.
std::string file_head(const fs::path& path, std::size_t n) {
    std::string head(n, '\0');
    const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (fd < 0) return {};
    const ssize_t got = ::pread(fd, head.data(), n, 0);
    ::close(fd);
    head.resize(got > 0 ? static_cast<std::size_t>(got) : 0);
    return head;
}

bool has_ctf_metadata(const fs::path& dir) {
    std::error_code ec;
    const fs::path metadata = dir / "metadata";
    return fs::is_regular_file(fs::status(metadata, ec)) && is_ctf_metadata(file_head(metadata, 6));
}

bool is_ctf_stream(const fs::path& path) {
    const std::string head = file_head(path, 4);
    return head == "\xC1\x1F\xFC\xC1" || head == "\xC1\xFC\x1F\xC1";
}

// Why packetized metadata does not end at a packet's end, or empty. Each
// packet begins with a header of fixed layout (CTF 1.8, "Metadata"): magic,
// uuid[16], checksum, content_size, packet_size (in bits, 32-bit integers in
// the magic's byte order), then five bytes. libbabeltrace2 2.0.4 loops
// forever on metadata cut inside a packet, so the cut is found here first.
std::string metadata_cut(const fs::path& metadata) {
    std::ifstream in(metadata, std::ios::binary);
    const std::string bytes((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    if (!bytes.starts_with("\x57\x1D\xD1\x75") && !bytes.starts_with("\x75\xD1\x1D\x57")) return {}; // plain text
    const bool little = bytes[0] == '\x57';
    const auto u32 = [&](std::size_t at) {
        std::uint32_t v = 0;
        for (int i = 0; i < 4; ++i) {
            const auto b = static_cast<std::uint8_t>(bytes[at + (little ? 3 - i : i)]);
            v = (v << 8) | b;
        }
        return v;
    };
    constexpr std::size_t kHeader = 37;
    std::size_t at = 0;
    while (at < bytes.size()) {
        if (bytes.size() - at < kHeader || u32(at) != 0x75D11D57)
            return fmt::format("no metadata packet header at byte {} of {}", at, bytes.size());
        const std::uint64_t packet = u32(at + 28) / 8;
        if (packet < kHeader || u32(at + 24) / 8 > packet)
            return fmt::format("a metadata packet at byte {} has sizes that cannot be", at);
        if (packet > bytes.size() - at)
            return fmt::format("its last packet, at byte {}, needs {} bytes and has {}", at, packet,
                               bytes.size() - at);
        at += packet;
    }
    return {};
}

} // namespace

std::vector<std::string> find_ctf_traces(const std::string& dir) {
    if (has_ctf_metadata(dir)) return {dir};
    // An LTTng session's output: SESSION/kernel, SESSION/ust/uid/UID/64-bit,
    // SESSION/ust/pid/NAME-PID-DATE, perhaps under one more directory.
    constexpr int kMaxDepth = 5;
    constexpr std::size_t kMaxDirectories = 10000;
    std::size_t visited = 0;
    std::vector<std::string> found;
    std::error_code ec;
    fs::recursive_directory_iterator it(dir, fs::directory_options::skip_permission_denied, ec);
    if (ec) throw InputError(fmt::format("{}: cannot list it ({})", dir, ec.message()));
    for (; it != fs::recursive_directory_iterator(); it.increment(ec)) {
        if (ec) throw InputError(fmt::format("{}: cannot list it ({})", dir, ec.message()));
        std::error_code type_ec;
        if (!it->is_directory(type_ec) || it->is_symlink(type_ec)) {
            if (it->is_symlink(type_ec)) it.disable_recursion_pending();
            continue;
        }
        if (++visited > kMaxDirectories) break; // a wrong directory (/, $HOME): no endless search
        if (has_ctf_metadata(it->path())) {
            found.push_back(it->path().string());
            it.disable_recursion_pending(); // a trace holds no trace
        } else if (it.depth() + 1 >= kMaxDepth) {
            it.disable_recursion_pending();
        }
    }
    std::sort(found.begin(), found.end());
    return found;
}

namespace {

// The directories of links given to source.ctf.fs (see the header): made in
// the parent, removed when it is done, whatever the child did.
class StagedTraces {
public:
    StagedTraces() = default;
    StagedTraces(const StagedTraces&) = delete;
    StagedTraces& operator=(const StagedTraces&) = delete;
    ~StagedTraces() {
        std::error_code ec;
        for (const std::string& d : dirs_) fs::remove_all(d, ec);
    }
    // A directory of links to `trace`'s metadata and streams; false if it
    // has no stream.
    bool add(const std::string& name, const fs::path& trace) {
        std::string dir = temporary_directory() + "/timersim-ctf.XXXXXX";
        if (!::mkdtemp(dir.data())) throw_temporary_file_error(name, "no temporary directory to read it from", errno);
        dirs_.push_back(dir);
        const fs::path absolute = fs::absolute(trace);
        link(name, absolute / "metadata", dir);
        bool streams = false;
        std::error_code ec;
        for (const fs::directory_entry& e : fs::directory_iterator(absolute, ec)) {
            std::error_code type_ec;
            if (e.path().filename() == "metadata" || !e.is_regular_file(type_ec) || !is_ctf_stream(e.path())) continue;
            link(name, e.path(), dir);
            streams = true;
        }
        if (ec) throw InputError(fmt::format("{}: cannot list {} ({})", name, trace.string(), ec.message()));
        if (!streams) dirs_.pop_back(), fs::remove_all(dir, ec);
        else staged_.push_back({dir, trace.string()});
        return streams;
    }
    struct Staged {
        std::string dir;   // the links
        std::string trace; // the trace they stand for
    };
    const std::vector<Staged>& staged() const { return staged_; }

private:
    static void link(const std::string& name, const fs::path& target, const std::string& dir) {
        const std::string at = dir + "/" + target.filename().string();
        if (::symlink(target.c_str(), at.c_str()) != 0)
            throw_temporary_file_error(name, "cannot link its files into a temporary directory", errno);
    }
    std::vector<std::string> dirs_;
    std::vector<Staged> staged_;
};

// What libbabeltrace2 said went wrong: its first cause (the deepest, where
// it was found; the causes that follow say what it was doing), without the addresses and fields it appends after ": ",
// the temporary directories named as the traces they stand for.
std::string babeltrace_error(const StagedTraces& staged) {
    const bt_error* error = bt_current_thread_take_error();
    if (!error) return "libbabeltrace2 gave no reason";
    std::string why;
    const std::uint64_t causes = bt_error_get_cause_count(error);
    for (std::uint64_t i = 0; i < causes && why.empty(); ++i) {
        std::string message = bt_error_cause_get_message(bt_error_borrow_cause_by_index(error, i));
        if (const auto colon = message.find(": "); colon != std::string::npos &&
                                                   message.find('=', colon) != std::string::npos)
            message.resize(colon);
        why = message;
    }
    bt_error_release(error);
    for (const auto& s : staged.staged()) {
        for (std::size_t at = why.find(s.dir); at != std::string::npos; at = why.find(s.dir, at + s.trace.size()))
            why.replace(at, s.dir.size(), s.trace);
    }
    std::replace(why.begin(), why.end(), '\n', ' ');
    while (!why.empty() && (why.back() == '.' || why.back() == ' ')) why.pop_back();
    return why.empty() ? "libbabeltrace2 gave no reason" : why;
}

template <class T, void (*Put)(const T*)> struct Ref {
    const T* p = nullptr;
    Ref() = default;
    explicit Ref(const T* q) : p(q) {}
    Ref(const Ref&) = delete;
    Ref& operator=(const Ref&) = delete;
    ~Ref() {
        if (p) Put(p);
    }
};

// One simple sink per stream: its events rendered into their own temporary
// file (lttng_events.hpp), merged by time once the graph has run.
bt_graph_simple_sink_component_consume_func_status consume(bt_message_iterator* it, void* data) {
    auto& stream = *static_cast<LttngStreamText*>(data);
    bt_message_array_const messages = nullptr;
    std::uint64_t count = 0;
    switch (bt_message_iterator_next(it, &messages, &count)) {
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_OK: break;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_END:
        return stream.finish() ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_END
                               : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_AGAIN: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_AGAIN;
    case BT_MESSAGE_ITERATOR_NEXT_STATUS_MEMORY_ERROR:
        return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_MEMORY_ERROR;
    default: return BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
    }
    bool ok = true;
    for (std::uint64_t i = 0; i < count; ++i) {
        if (ok) ok = stream.message(messages[i]); // no exception crosses libbabeltrace2's C frames
        bt_message_put_ref(messages[i]);
    }
    return ok ? BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_OK
              : BT_GRAPH_SIMPLE_SINK_COMPONENT_CONSUME_FUNC_STATUS_ERROR;
}

// In the child: the graph of every staged trace, run, its streams merged
// into `text_fd`. Throws InputError.
void render_ctf(const StagedTraces& staged, const std::string& name, int text_fd) {
    const auto unreadable = [&](std::string_view why) { throw_unreadable(name, kReader, why); };
    bt_logging_set_global_level(BT_LOGGING_LEVEL_NONE);
    const bt_plugin* plugin_ptr = nullptr;
    if (bt_plugin_find("ctf", BT_TRUE, BT_TRUE, BT_TRUE, BT_TRUE, BT_FALSE, &plugin_ptr) != BT_PLUGIN_FIND_STATUS_OK)
        unreadable("libbabeltrace2 has no ctf plugin (Debian package libbabeltrace2-0)");
    const Ref<bt_plugin, bt_plugin_put_ref> plugin(plugin_ptr);
    const bt_component_class_source* source_class =
        bt_plugin_borrow_source_component_class_by_name_const(plugin.p, "fs");
    if (!source_class) unreadable("libbabeltrace2's ctf plugin has no fs source");
    const Ref<bt_graph, bt_graph_put_ref> graph(bt_graph_create(0));
    if (!graph.p) unreadable("libbabeltrace2 cannot make a graph");
    bt_graph* g = const_cast<bt_graph*>(graph.p);

    LttngText text(name);
    std::size_t index = 0;
    for (const auto& s : staged.staged()) {
        ++index;
        bt_value* params = bt_value_map_create();
        bt_value* inputs = bt_value_array_create();
        const Ref<bt_value, bt_value_put_ref> params_ref(params), inputs_ref(inputs);
        if (!params || !inputs || bt_value_array_append_string_element(inputs, s.dir.c_str()) != 0 ||
            bt_value_map_insert_entry(params, "inputs", inputs) != 0)
            unreadable("libbabeltrace2 is out of memory");
        const bt_component_source* source = nullptr;
        if (bt_graph_add_source_component(g, source_class, fmt::format("source-{}", index).c_str(), params,
                                          BT_LOGGING_LEVEL_NONE, &source) != BT_GRAPH_ADD_COMPONENT_STATUS_OK)
            unreadable(fmt::format("libbabeltrace2 cannot open it (metadata it cannot parse, or a stream file cut "
                                   "short or corrupt): {}",
                                   babeltrace_error(staged)));
        for (std::uint64_t p = 0; p < bt_component_source_get_output_port_count(source); ++p) {
            LttngStreamText& stream = text.add_stream();
            const bt_component_sink* sink = nullptr;
            if (bt_graph_add_simple_sink_component(g, fmt::format("sink-{}-{}", index, p).c_str(), nullptr, consume,
                                                   nullptr, &stream, &sink) != BT_GRAPH_ADD_COMPONENT_STATUS_OK ||
                bt_graph_connect_ports(g, bt_component_source_borrow_output_port_by_index_const(source, p),
                                       bt_component_sink_borrow_input_port_by_index_const(sink, 0),
                                       nullptr) != BT_GRAPH_CONNECT_PORTS_STATUS_OK)
                unreadable(babeltrace_error(staged));
        }
    }
    if (text.streams() == 0) unreadable("libbabeltrace2 finds no stream in it");
    bt_graph_run_status status;
    do status = bt_graph_run(g);
    while (status == BT_GRAPH_RUN_STATUS_AGAIN);
    if (status != BT_GRAPH_RUN_STATUS_OK) {
        text.throw_error(); // an error of ours (a timer event without its fields)
        unreadable(babeltrace_error(staged));
    }
    text.write_merged(text_fd);
}

} // namespace

std::unique_ptr<InputFile> lttng_ctf_text(const InputFile& dir) {
    const std::string& name = dir.name();
    const std::vector<std::string> traces = find_ctf_traces(name);
    if (traces.empty())
        throw InputError(fmt::format("{}: a directory, not an LTTng trace (no CTF metadata in it or below it)", name));
    StagedTraces staged;
    std::uintmax_t stream_bytes = 0;
    for (const std::string& trace : traces) {
        if (const std::string cut = metadata_cut(fs::path(trace) / "metadata"); !cut.empty())
            throw_unreadable(name, kReader, fmt::format("its metadata ({}/metadata) is cut short: {}", trace, cut));
        staged.add(name, trace);
    }
    if (staged.staged().empty())
        throw_unreadable(name, kReader, "it has CTF metadata but no stream file (none starts with CTF's packet magic)");
    for (const auto& s : staged.staged()) {
        std::error_code ec;
        for (const fs::directory_entry& e : fs::directory_iterator(s.dir, ec)) {
            const std::uintmax_t size = fs::file_size(e.path(), ec); // through the link
            if (!ec) stream_bytes += size;
        }
    }
    const int fd = render_in_child(name, kReader, [&](int text_fd) {
        // A safety net for damaged traces libbabeltrace2 loops on: two
        // minutes of CPU, and a second more per 4 MB of streams.
        const rlim_t seconds = 120 + static_cast<rlim_t>(stream_bytes >> 22);
        const rlimit limit{.rlim_cur = seconds, .rlim_max = seconds + 5};
        ::setrlimit(RLIMIT_CPU, &limit);
        render_ctf(staged, name, text_fd);
    });
    return InputFile::from_temporary(fd, name);
}

} // namespace timersim
