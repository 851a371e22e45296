// InputFile: a trace input, read once from start to end. The name is a
// file's path, or "-" for standard input, so pipes, FIFOs and process
// substitution (/dev/fd/N) work like files: nothing is opened twice and
// nothing seeks. Input compressed with xz, gzip or zstd is decompressed on
// the fly (liblzma, zlib, libzstd), recognised by its first bytes (its
// magic), never by its name. Memory: one 64 KiB buffer, plus the
// decoder's state (xz up to about 10 MB for `xz -9` streams).
//
// The trace readers take an InputFile (TraceReader, FtraceReader); a read
// error in the middle of the input, or corrupt compressed data, comes out of
// them as a TraceError at the line being read.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <stdexcept>
#include <string>

namespace timersim {

// An input that cannot be opened or read at all: what() is "NAME: reason"
// (e.g. "nosuch.trace: No such file or directory"); the CLI prints it after
// "timersim: " and exits 2.
class InputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

enum class Compression : std::uint8_t { none, xz, gzip, zstd };
const char* to_string(Compression c) noexcept;

class InputFile {
public:
    // Opens `path` ("-": standard input) and reads its first bytes to tell
    // whether it is compressed. Throws InputError.
    explicit InputFile(const std::string& path);
    ~InputFile();
    InputFile(const InputFile&) = delete;
    InputFile& operator=(const InputFile&) = delete;

    // The name as given, "<stdin>" for "-": what messages and reports show.
    const std::string& name() const noexcept { return name_; }
    Compression compression() const noexcept { return compression_; }

    // Fills `to` with up to `n` bytes of the (decompressed) input; fewer
    // only at its end or on an error (then failed() and error() say why).
    std::size_t read(char* to, std::size_t n);
    bool failed() const noexcept { return !error_.empty(); }
    const std::string& error() const noexcept { return error_; }

    // The whole rest of the input. Throws InputError on an error.
    std::string read_all();

    struct Decoder; // one per compression, in input_file.cpp

private:
    std::size_t read_raw(char* to, std::size_t n); // from the fd, after the peeked bytes
    void fail(std::string what);

    std::string name_;
    int fd_ = -1;
    bool owns_fd_ = false;
    Compression compression_ = Compression::none;
    std::unique_ptr<Decoder> decoder_;
    std::unique_ptr<char[]> raw_;   // compressed bytes read, not yet decoded
    std::size_t raw_begin_ = 0;
    std::size_t raw_end_ = 0;
    bool raw_eof_ = false;
    bool ended_ = false;            // the decoder reached the end of its data
    std::string error_;
};

} // namespace timersim
