#include "workloads/traces/input/kernel_text.hpp"

#include "workloads/traces/input/lttng_ctf.hpp"
#include "workloads/traces/input/trace_dat.hpp"

namespace timersim {

KernelText::KernelText(InputFile& in) : in_(&in) {
    if (in.is_directory()) {
        rendered_ = lttng_ctf_text(in);
        return;
    }
    in.keep_for_reading_again();
    if (is_trace_dat(in.peek(kTraceDatMagic.size()))) {
        in.stop_keeping(); // the passes read its text: no copy of its bytes
        rendered_ = trace_dat_text(in);
    }
}

std::unique_ptr<InputFile> KernelText::copy_for_passes() { return (rendered_ ? *rendered_ : *in_).read_again(); }

InputFile& KernelText::pass() {
    InputFile& source = rendered_ ? *rendered_ : *in_;
    if (!first_given_) {
        first_given_ = true;
        return source;
    }
    current_.reset(); // close the pass before's descriptor first
    current_ = source.read_again();
    return *current_;
}

} // namespace timersim
