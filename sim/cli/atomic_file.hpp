// Output files appear whole or not at all: written to a temporary file in
// the same directory, flushed, then renamed over the target. A run that fails
// halfway leaves no partial output behind.
#pragma once

#include <cstdio>
#include <stdexcept>
#include <string>
#include <string_view>

namespace timersim {

// An output file that cannot be created (what(): "FILE: cannot create file
// (reason)"). Commands create their outputs before they simulate, so this
// comes first; the CLI reports it as one line with exit status 2.
class OutputError : public std::runtime_error {
public:
    using std::runtime_error::runtime_error;
};

// A file being written under a temporary name. commit() renames it into
// place; destroying it uncommitted removes the temporary file.
class AtomicOutputFile {
public:
    explicit AtomicOutputFile(std::string path); // throws OutputError naming the file
    ~AtomicOutputFile();
    AtomicOutputFile(const AtomicOutputFile&) = delete;
    AtomicOutputFile& operator=(const AtomicOutputFile&) = delete;

    std::FILE* get() const noexcept { return file_; }
    const std::string& path() const noexcept { return path_; }
    void write(std::string_view data);
    void commit();

private:
    [[noreturn]] void fail(const char* what);
    std::string path_;
    std::string tmp_;
    std::FILE* file_ = nullptr;
    bool committed_ = false;
};

// Throws std::runtime_error naming the file if it cannot be written.
void write_file_atomically(const std::string& path, std::string_view content);

} // namespace timersim
