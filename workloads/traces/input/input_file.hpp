// InputFile: a trace input, read from start to end. The name is a file's
// path, or "-" for standard input, so pipes, FIFOs and process substitution
// (/dev/fd/N) work like files: nothing is opened twice by name and nothing
// seeks. Input compressed with xz, gzip or zstd is decompressed on the fly
// (liblzma, zlib, libzstd), recognised by its first bytes (its magic),
// never by its name. Memory: one 64 KiB buffer, plus the decoder's state
// (xz up to about 10 MB for `xz -9` streams).
//
// A reader that passes over the input more than once (kernel text: a first
// pass decides its HZ and clock, the next replays it) asks for that before
// reading, and then reads it again from the start, in constant memory
// whatever its length:
//
//   InputFile in(path);
//   in.keep_for_reading_again();       // before any read() or peek()
//   ... read `in` ...
//   std::unique_ptr<InputFile> again = in.read_again();   // the same bytes
//
// A regular file is read again through its open descriptor (pread, its own
// offset); it must not change meanwhile: its size and modification time
// are checked when it is read again and at the end of each pass, and a
// change is an InputError "NAME: changed while being read". Anything else
// (standard input, a pipe, and a regular file of size 0 such as tracefs's
// trace or a /proc file, whose text is made as it is read) is copied as it
// is read, still compressed, into an unlinked temporary file (under $TMPDIR
// or /tmp), which later passes read.
//
// The trace readers take an InputFile (TraceReader, FtraceReader); a read
// error in the middle of the input, or corrupt compressed data, comes out of
// them as a TraceError at the line being read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>

namespace timersim {

// An input that cannot be opened or read at all: what() is "NAME: reason"
// (e.g. "nosuch.trace: No such file or directory"); the CLI prints it after
// "timersim: " and exits 2.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// The directory temporary files go in: $TMPDIR if set (and not empty),
// else /tmp.
std::string temporary_directory();

// An unlinked temporary file open for reading and writing, in
// temporary_directory() (O_TMPFILE where the file system has it): -1, errno
// set, if none can be made. Gone when its last descriptor closes.
int open_temporary_file();

// Throws the InputError of a temporary file for input `name` that cannot
// be made or written (a missing directory, a full disk): "NAME: WHAT in
// DIR (the text of errno `error`)", DIR being temporary_directory(). Not
// the input's own fault, so never worded as a read error of it.
[[noreturn]] void throw_temporary_file_error(const std::string& name, std::string_view what, int error);

enum class Compression : std::uint8_t { none, xz, gzip, zstd };
const char* to_string(Compression c) noexcept;

class InputFile {
public:
    // What a directory given as `path` is: an error ("NAME: Is a
    // directory"), or an input whose reader reads the directory itself
    // (KernelText: an LTTng trace, lttng_ctf.hpp). Such an input has no
    // bytes: read() and peek() fail with "Is a directory".
    enum class Directories : std::uint8_t { refused, opened };

    // Opens `path` ("-": standard input) and reads its first bytes to tell
    // whether it is compressed. Throws InputError.
    explicit InputFile(const std::string& path, Directories directories = Directories::refused);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    // The name as given, "<stdin>" for "-": what messages and reports show.
    const std::string& name() const noexcept { return name_; }
    Compression compression() const noexcept { return compression_; }
    // A directory opened with Directories::opened; name() is its path.
    bool is_directory() const noexcept { return directory_; }

    // Fills `to` with up to `n` bytes of the (decompressed) input; fewer
    // only at its end or on an error (then failed() and error() say why).
    // Throws InputError at the end of a file kept for reading again that
    // changed (see the top).
    std::size_t read(char* to, std::size_t n);
    bool failed() const noexcept { return !error_.empty(); }
    const std::string& error() const noexcept { return error_; }

    // Up to `n` of the next bytes of the (decompressed) input, left for
    // read() to hand out: how a reader tells what the input is (trace.dat's
    // magic). Fewer only at its end or on an error.
    std::string_view peek(std::size_t n);

    // The whole rest of the input. Throws InputError on an error.
    std::string read_all();

    // See the top: call before read() and peek(). Throws InputError if a
    // temporary file is needed and cannot be made.
    void keep_for_reading_again();
    // Undoes keep_for_reading_again(), once what the input is is known and
    // it will not be read again (a trace.dat: its rendered text is): a
    // pipe's copy is closed and written no more. read_again() is then a
    // std::logic_error.
    void stop_keeping();
    // keep_for_reading_again() was called, and not undone.
    bool kept_for_reading_again() const noexcept { return again_by_fd_ || copy_fd_ >= 0; }
    // The input from its start, as a new InputFile of the same name (which
    // may itself be read again). Reads what this one has not yet read, if
    // that is needed to copy it: this one is then not read further (read()
    // and peek() throw std::logic_error, for a file as for a pipe); only
    // read_again() may be called again. Throws InputError; std::logic_error
    // without keep_for_reading_again().
    std::unique_ptr<InputFile> read_again();

    // An unlinked temporary file (already written) as an input named `name`;
    // takes `fd`. For inputs made on the way (trace.dat's text).
    static std::unique_ptr<InputFile> from_temporary(int fd, std::string name);

    struct Decoder; // one per compression, in input_file.cpp

private:
    struct Positional {}; // read fd with pread() from offset 0 (a regular file or a temporary copy)
    struct Stamp {        // a regular file's size and modification time
        std::int64_t size = 0;
        std::int64_t mtime_s = 0;
        std::int64_t mtime_ns = 0;
        bool operator==(const Stamp&) const = default;
    };
    InputFile(int fd, std::string name, Positional, std::optional<Stamp> kept_as = {});
    void open_decoder();
    std::size_t read_decoded(char* to, std::size_t n);
    std::size_t read_raw(char* to, std::size_t n); // from the fd, after the peeked bytes
    void fail(std::string what);
    static std::optional<Stamp> stamp_of(int fd) noexcept; // none if fstat() fails
    void check_unchanged() const; // InputError if the file is no longer as kept_as_
    void refuse_after_read_again(const char* what) const; // std::logic_error once handed_on_

    std::string name_;
    int fd_ = -1;
    bool owns_fd_ = false;
    bool directory_ = false;
    bool positional_ = false;  // pread() at offset_, not read()
    std::uint64_t offset_ = 0;
    bool started_ = false;     // read() or peek() was called
    bool handed_on_ = false;   // read_again() was called: read() and peek() are refused
    bool again_by_fd_ = false; // keep_for_reading_again(): fd_ is a regular file (or a temporary copy)
    std::optional<Stamp> kept_as_; // a regular file read again by fd_: as it was when kept
    int copy_fd_ = -1;         // keep_for_reading_again() of a pipe: the raw bytes, copied as read
    std::string peeked_;       // decoded bytes peek() read, not yet handed out by read()
    std::size_t peeked_begin_ = 0;
    Compression compression_ = Compression::none;
    std::unique_ptr<Decoder> decoder_;
    std::unique_ptr<char[]> raw_;   // compressed bytes read, not yet decoded
    std::size_t raw_begin_ = 0;
    std::size_t raw_end_ = 0;
    bool raw_eof_ = false;
    bool ended_ = false;            // the decoder reached the end of its data
    std::string error_;
};

// Passes over one input made on several threads at once (compare's
// replays, each reading a trace again): read_again() of an origin kept for
// it, one call at a time; each pass then reads on its own (its own
// descriptor and offset).
class InputPasses {
public:
    // `origin`: an input that can be read again (InputFile::read_again()).
    explicit InputPasses(std::unique_ptr<InputFile> origin) : origin_(std::move(origin)) {}
    std::unique_ptr<InputFile> next() {
        const std::lock_guard lock(mutex_);
        return origin_->read_again();
    }

private:
    std::mutex mutex_;
    std::unique_ptr<InputFile> origin_;
};

} // namespace timersim
