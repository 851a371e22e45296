// KernelText: a kernel trace's text (/sys/kernel/tracing/trace, trace-cmd
// report, perf script, or a trace.dat or an LTTng trace directory rendered
// as that text), for readers that pass over it more than once. Its HZ and
// its clock are decided from all of its events (kernel/hz_inference.hpp) before the first one is
// replayed, so a replay reads it twice, and never holds it in memory:
//
//   InputFile in(path, InputFile::Directories::opened);  // any file or "-", compressed
//                                                         // or not, or a directory
//   KernelText text(in);
//   FtraceReader first(text.pass(), ...);  // HZ and clock samples
//   ...
//   FtraceReader second(text.pass(), ...); // the replay; `first` must be done
//
// A trace.dat (trace_dat.hpp) or an LTTng trace (a directory,
// lttng_ctf.hpp) is rendered once, into a temporary file; other text is
// read again from its file, or from the temporary copy of a pipe
// (InputFile::keep_for_reading_again()).
#pragma once

#include "workloads/traces/input/input_file.hpp"

#include <memory>
#include <string>

namespace timersim {

class KernelText {
public:
    // `in` must not have been read yet, and must outlive this. Throws
    // InputError (a trace.dat or an LTTng trace that cannot be read, a
    // directory that is not an LTTng trace, no temporary file).
    explicit KernelText(InputFile& in);
    KernelText(const KernelText&) = delete;
    KernelText& operator=(const KernelText&) = delete;

    // The text from its start. The input a pass before got is then gone
    // (the first pass of plain text reads `in` itself). Throws InputError.
    InputFile& pass();
    const std::string& name() const noexcept { return in_->name(); }
    // The text from its start as an input of its own, unread, from which
    // more passes are made with read_again() after this KernelText and the
    // InputFile it was made from are gone. Throws InputError.
    std::unique_ptr<InputFile> copy_for_passes();

private:
    InputFile* in_;
    std::unique_ptr<InputFile> rendered_; // a trace.dat's text
    std::unique_ptr<InputFile> current_;  // the pass's input, after the first
    bool first_given_ = false;
};

} // namespace timersim
