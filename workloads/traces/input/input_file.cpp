#include "workloads/traces/input/input_file.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>
// The WebAssembly build of the playground (web/, scripts/build-web) defines
// TIMERSIM_NO_DECOMPRESSORS: Debian ships liblzma, zlib and libzstd for the
// host only. That build refuses compressed input by name instead.
#ifndef TIMERSIM_NO_DECOMPRESSORS
#include <lzma.h>
#include <zlib.h>
#include <zstd.h>
#endif

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstdlib>
#include <cstring>
#include <new>
#include <stdexcept>

namespace timersim {

namespace {

constexpr std::size_t kRawBuffer = 64 * 1024;
// The longest magic looked at: xz's FD 37 7A 58 5A 00.
constexpr std::size_t kMagicBytes = 6;

Compression sniff(const unsigned char* p, std::size_t n) {
    static constexpr unsigned char xz[] = {0xFD, '7', 'z', 'X', 'Z', 0x00};
    static constexpr unsigned char gzip[] = {0x1F, 0x8B};
    static constexpr unsigned char zstd[] = {0x28, 0xB5, 0x2F, 0xFD}; // frame magic 0xFD2FB528, little-endian
    if (n >= sizeof xz && std::memcmp(p, xz, sizeof xz) == 0) return Compression::xz;
    if (n >= sizeof gzip && std::memcmp(p, gzip, sizeof gzip) == 0) return Compression::gzip;
    if (n >= sizeof zstd && std::memcmp(p, zstd, sizeof zstd) == 0) return Compression::zstd;
    return Compression::none;
}

} // namespace

const char* to_string(Compression c) noexcept {
    switch (c) {
    case Compression::none: return "none";
    case Compression::xz: return "xz";
    case Compression::gzip: return "gzip";
    case Compression::zstd: return "zstd";
    }
    return "?";
}

// One decompressor. step() decodes from `in` into `out`, reporting what it
// consumed and produced; `eof` says no input follows `in`. It returns done
// once the data has ended properly at the end of the input, and error (with
// `error` set) for corrupt or truncated data.
struct InputFile::Decoder {
    enum class Status : std::uint8_t { more, done, error };
    virtual ~Decoder() = default;
    virtual Status step(const unsigned char* in, std::size_t in_n, std::size_t& consumed, unsigned char* out,
                        std::size_t out_n, std::size_t& produced, bool eof, std::string& error) = 0;
};

namespace {

using Status = InputFile::Decoder::Status;

#ifndef TIMERSIM_NO_DECOMPRESSORS
// xz (liblzma), concatenated streams as `xz -dc` reads them.
class XzDecoder final : public InputFile::Decoder {
public:
    XzDecoder() {
        if (lzma_stream_decoder(&s_, UINT64_MAX, LZMA_CONCATENATED) != LZMA_OK) throw std::bad_alloc();
    }
    ~XzDecoder() override { lzma_end(&s_); }
    Status step(const unsigned char* in, std::size_t in_n, std::size_t& consumed, unsigned char* out,
                std::size_t out_n, std::size_t& produced, bool eof, std::string& error) override {
        s_.next_in = in;
        s_.avail_in = in_n;
        s_.next_out = out;
        s_.avail_out = out_n;
        const lzma_ret r = lzma_code(&s_, eof ? LZMA_FINISH : LZMA_RUN);
        consumed = in_n - s_.avail_in;
        produced = out_n - s_.avail_out;
        switch (r) {
        case LZMA_OK: return Status::more;
        case LZMA_STREAM_END: return Status::done;
        case LZMA_BUF_ERROR: error = "xz: unexpected end of the compressed data"; return Status::error;
        case LZMA_MEM_ERROR: error = "xz: out of memory"; return Status::error;
        case LZMA_FORMAT_ERROR: error = "xz: not in the xz format"; return Status::error;
        case LZMA_OPTIONS_ERROR: error = "xz: unsupported compression options"; return Status::error;
        default: error = "xz: compressed data is corrupt"; return Status::error;
        }
    }

private:
    lzma_stream s_ = LZMA_STREAM_INIT;
};

// gzip (zlib), several members one after another as gunzip reads them.
class GzipDecoder final : public InputFile::Decoder {
public:
    GzipDecoder() {
        if (inflateInit2(&z_, 16 + MAX_WBITS) != Z_OK) throw std::bad_alloc();
    }
    ~GzipDecoder() override { inflateEnd(&z_); }
    Status step(const unsigned char* in, std::size_t in_n, std::size_t& consumed, unsigned char* out,
                std::size_t out_n, std::size_t& produced, bool eof, std::string& error) override {
        consumed = produced = 0;
        if (between_members_) {
            if (in_n == 0) return eof ? Status::done : Status::more;
            inflateReset(&z_);
            between_members_ = false;
        }
        const auto in_size = static_cast<uInt>(std::min<std::size_t>(in_n, UINT_MAX));
        const auto out_size = static_cast<uInt>(std::min<std::size_t>(out_n, UINT_MAX));
        z_.next_in = const_cast<Bytef*>(in);
        z_.avail_in = in_size;
        z_.next_out = out;
        z_.avail_out = out_size;
        const int r = inflate(&z_, Z_NO_FLUSH);
        consumed = in_size - z_.avail_in;
        produced = out_size - z_.avail_out;
        if (r == Z_STREAM_END) {
            between_members_ = true;
            return Status::more;
        }
        if (r == Z_OK) return Status::more;
        if (r == Z_BUF_ERROR) { // no progress possible: more input needed
            if (eof && in_n == consumed) {
                error = "gzip: unexpected end of the compressed data";
                return Status::error;
            }
            return Status::more;
        }
        if (r == Z_MEM_ERROR) {
            error = "gzip: out of memory";
            return Status::error;
        }
        error = std::string("gzip: compressed data is corrupt") + (z_.msg ? std::string(" (") + z_.msg + ")" : "");
        return Status::error;
    }

private:
    z_stream z_{};
    bool between_members_ = false;
};

// zstd (libzstd), any number of frames.
class ZstdDecoder final : public InputFile::Decoder {
public:
    ZstdDecoder() : d_(ZSTD_createDStream()) {
        if (!d_) throw std::bad_alloc();
    }
    ~ZstdDecoder() override { ZSTD_freeDStream(d_); }
    Status step(const unsigned char* in, std::size_t in_n, std::size_t& consumed, unsigned char* out,
                std::size_t out_n, std::size_t& produced, bool eof, std::string& error) override {
        consumed = produced = 0;
        if (eof && in_n == 0 && frame_done_) return Status::done;
        ZSTD_inBuffer i{in, in_n, 0};
        ZSTD_outBuffer o{out, out_n, 0};
        const std::size_t r = ZSTD_decompressStream(d_, &o, &i);
        consumed = i.pos;
        produced = o.pos;
        if (ZSTD_isError(r)) {
            error = std::string("zstd: compressed data is corrupt (") + ZSTD_getErrorName(r) + ")";
            return Status::error;
        }
        // 0: a frame is complete and flushed (a call that did nothing, at a
        // frame's end, says what the next frame would need instead).
        if (consumed > 0 || produced > 0) frame_done_ = r == 0;
        if (eof && consumed == in_n && produced == 0 && !frame_done_) {
            error = "zstd: unexpected end of the compressed data";
            return Status::error;
        }
        return Status::more;
    }

private:
    ZSTD_DStream* d_;
    bool frame_done_ = false;
};

#endif

} // namespace

InputFile::InputFile(const std::string& path, Directories directories) : name_(path == "-" ? "<stdin>" : path) {
    if (path == "-") {
        fd_ = STDIN_FILENO;
    } else {
        do fd_ = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
        while (fd_ < 0 && errno == EINTR);
        if (fd_ < 0) throw InputError(name_ + ": " + std::strerror(errno));
        owns_fd_ = true;
        struct stat st{};
        if (directories == Directories::opened && ::fstat(fd_, &st) == 0 && S_ISDIR(st.st_mode)) {
            directory_ = true;
            raw_eof_ = true;
            fail(std::strerror(EISDIR));
            return;
        }
    }
    open_decoder();
}

InputFile::InputFile(int fd, std::string name, Positional, std::optional<Stamp> kept_as)
    : name_(std::move(name)), fd_(fd), owns_fd_(true), positional_(true), again_by_fd_(true),
      kept_as_(kept_as) {
    open_decoder();
}

std::unique_ptr<InputFile> InputFile::from_temporary(int fd, std::string name) {
    return std::unique_ptr<InputFile>(new InputFile(fd, std::move(name), Positional{}));
}

// Reads the first bytes, which say what the input is, and makes its decoder.
void InputFile::open_decoder() {
    raw_.reset(new char[kRawBuffer]);
    // A short read of a pipe is not its end: keep reading until there are
    // enough bytes, or it ends.
    try {
        while (raw_end_ < kMagicBytes && !raw_eof_) {
            const std::size_t got = read_raw(raw_.get() + raw_end_, kMagicBytes - raw_end_);
            if (failed()) throw InputError(name_ + ": " + error_);
            raw_end_ += got;
        }
    } catch (const InputError&) {
        if (owns_fd_) ::close(fd_);
        throw;
    }
    compression_ = sniff(reinterpret_cast<const unsigned char*>(raw_.get()), raw_end_);
    switch (compression_) {
    case Compression::none: break;
#ifndef TIMERSIM_NO_DECOMPRESSORS
    case Compression::xz: decoder_ = std::make_unique<XzDecoder>(); break;
    case Compression::gzip: decoder_ = std::make_unique<GzipDecoder>(); break;
    case Compression::zstd: decoder_ = std::make_unique<ZstdDecoder>(); break;
#else
    default:
        if (owns_fd_) ::close(fd_);
        throw InputError(name_ + ": " + to_string(compression_) +
                         "-compressed: this build reads uncompressed input only (decompress it first)");
#endif
    }
}

InputFile::~InputFile() {
    if (owns_fd_) ::close(fd_);
    if (copy_fd_ >= 0) ::close(copy_fd_);
}

std::string temporary_directory() {
    const char* env = std::getenv("TMPDIR");
    return env && *env ? env : "/tmp";
}

int open_temporary_file() {
    const std::string dir = temporary_directory();
    int fd = -1;
#ifdef O_TMPFILE
    fd = ::open(dir.c_str(), O_TMPFILE | O_RDWR | O_CLOEXEC, 0600);
#endif
    if (fd < 0) {
        std::string path = dir + "/timersim-input.XXXXXX";
        fd = ::mkostemp(path.data(), O_CLOEXEC);
        if (fd >= 0) ::unlink(path.c_str());
    }
    return fd;
}

void throw_temporary_file_error(const std::string& name, std::string_view what, int error) {
    throw InputError(name + ": " + std::string(what) + " in " + temporary_directory() + " (" +
                     std::strerror(error) + ")");
}

std::optional<InputFile::Stamp> InputFile::stamp_of(int fd) noexcept {
    struct stat st{};
    if (::fstat(fd, &st) != 0) return std::nullopt;
    return Stamp{.size = st.st_size, .mtime_s = st.st_mtim.tv_sec, .mtime_ns = st.st_mtim.tv_nsec};
}

namespace {

bool write_all(int fd, const char* p, std::size_t n) {
    while (n > 0) {
        const ssize_t put = ::write(fd, p, n);
        if (put < 0 && errno == EINTR) continue;
        if (put == 0) errno = ENOSPC; // write() says nothing else when it writes nothing
        if (put <= 0) return false;
        p += put;
        n -= static_cast<std::size_t>(put);
    }
    return true;
}

} // namespace

void InputFile::keep_for_reading_again() {
    if (started_) throw std::logic_error("InputFile::keep_for_reading_again() after reading");
    if (again_by_fd_ || copy_fd_ >= 0) return;
    struct stat st{};
    // A regular file of size 0 may be one whose text is made as it is read
    // (tracefs, /proc): copied like a pipe, since it may differ next time.
    if (owns_fd_ && ::fstat(fd_, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0) {
        // The bytes read so far are the magic, at offset 0: go on from
        // there with pread(), so that a copy of the descriptor reads
        // from 0 on its own.
        positional_ = true;
        offset_ = raw_end_;
        again_by_fd_ = true;
        kept_as_ = stamp_of(fd_);
        return;
    }
    copy_fd_ = open_temporary_file();
    if (copy_fd_ < 0) throw_temporary_file_error(name_, "no temporary file to read it again from", errno);
    if (!write_all(copy_fd_, raw_.get(), raw_end_)) {
        const int error = errno;
        ::close(copy_fd_);
        copy_fd_ = -1;
        throw_temporary_file_error(name_, "cannot write its temporary copy", error);
    }
}

void InputFile::stop_keeping() {
    if (copy_fd_ >= 0) ::close(copy_fd_);
    copy_fd_ = -1;
    again_by_fd_ = false;
    kept_as_.reset();
}

void InputFile::check_unchanged() const {
    if (kept_as_ && stamp_of(fd_) != kept_as_) throw InputError(name_ + ": changed while being read");
}

std::unique_ptr<InputFile> InputFile::read_again() {
    if (!again_by_fd_ && copy_fd_ < 0)
        throw std::logic_error("InputFile::read_again() without keep_for_reading_again()");
    int source = fd_;
    check_unchanged();
    if (!again_by_fd_) {
        // The copy must hold every byte: read what is left through it.
        char rest[4096];
        while (!raw_eof_) read_raw(rest, sizeof rest);
        if (failed()) throw InputError(name_ + ": " + error_);
        source = copy_fd_;
    }
    const int fd = ::fcntl(source, F_DUPFD_CLOEXEC, 0);
    if (fd < 0) throw InputError(name_ + ": cannot read it again (" + std::strerror(errno) + ")");
    handed_on_ = true;
    return std::unique_ptr<InputFile>(new InputFile(fd, name_, Positional{}, kept_as_));
}

void InputFile::fail(std::string what) {
    if (error_.empty()) error_ = std::move(what);
}

std::size_t InputFile::read_raw(char* to, std::size_t n) {
    while (true) {
        const ssize_t got = positional_ ? ::pread(fd_, to, n, static_cast<off_t>(offset_)) : ::read(fd_, to, n);
        if (got > 0) {
            offset_ += static_cast<std::uint64_t>(got);
            if (copy_fd_ >= 0 && !write_all(copy_fd_, to, static_cast<std::size_t>(got))) {
                raw_eof_ = true;
                throw_temporary_file_error(name_, "cannot write its temporary copy", errno);
            }
            return static_cast<std::size_t>(got);
        }
        if (got == 0) {
            raw_eof_ = true;
            check_unchanged();
            return 0;
        }
        if (errno == EINTR) continue;
        fail(std::strerror(errno));
        raw_eof_ = true;
        return 0;
    }
}

void InputFile::refuse_after_read_again(const char* what) const {
    if (handed_on_) throw std::logic_error(std::string("InputFile::") + what + " after read_again()");
}

std::size_t InputFile::read(char* to, std::size_t n) {
    refuse_after_read_again("read()");
    started_ = true;
    std::size_t got = 0;
    if (peeked_begin_ < peeked_.size()) {
        got = std::min(n, peeked_.size() - peeked_begin_);
        std::memcpy(to, peeked_.data() + peeked_begin_, got);
        peeked_begin_ += got;
        if (peeked_begin_ == peeked_.size()) {
            peeked_.clear();
            peeked_begin_ = 0;
        }
    }
    return got + read_decoded(to + got, n - got);
}

std::string_view InputFile::peek(std::size_t n) {
    refuse_after_read_again("peek()");
    started_ = true;
    if (peeked_begin_ > 0) {
        peeked_.erase(0, peeked_begin_);
        peeked_begin_ = 0;
    }
    const std::size_t have = peeked_.size();
    if (have < n) {
        peeked_.resize(n);
        peeked_.resize(have + read_decoded(peeked_.data() + have, n - have));
    }
    return std::string_view(peeked_).substr(0, n);
}

std::size_t InputFile::read_decoded(char* to, std::size_t n) {
    std::size_t got = 0;
    if (!decoder_) {
        while (got < n && !failed()) {
            if (raw_begin_ < raw_end_) {
                const std::size_t k = std::min(n - got, raw_end_ - raw_begin_);
                std::memcpy(to + got, raw_.get() + raw_begin_, k);
                raw_begin_ += k;
                got += k;
                continue;
            }
            if (raw_eof_) break;
            got += read_raw(to + got, n - got);
        }
        return got;
    }
    while (got < n && !ended_ && !failed()) {
        if (raw_begin_ == raw_end_ && !raw_eof_) {
            raw_begin_ = 0;
            raw_end_ = read_raw(raw_.get(), kRawBuffer);
            if (failed()) break;
        }
        std::size_t consumed = 0;
        std::size_t produced = 0;
        std::string error;
        const Decoder::Status status =
            decoder_->step(reinterpret_cast<const unsigned char*>(raw_.get() + raw_begin_), raw_end_ - raw_begin_,
                           consumed, reinterpret_cast<unsigned char*>(to + got), n - got, produced, raw_eof_, error);
        raw_begin_ += consumed;
        got += produced;
        if (status == Decoder::Status::error) fail(std::move(error));
        if (status == Decoder::Status::done) ended_ = true;
    }
    return got;
}

std::string InputFile::read_all() {
    std::string out;
    std::size_t size = 0;
    while (true) {
        out.resize(size + kRawBuffer);
        const std::size_t got = read(out.data() + size, kRawBuffer);
        size += got;
        if (got < kRawBuffer) break;
    }
    out.resize(size);
    if (failed()) throw InputError(name_ + ": " + error_);
    return out;
}

} // namespace timersim
