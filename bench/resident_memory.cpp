#include "bench/resident_memory.hpp"

#include <fstream>
#include <malloc.h>
#include <unistd.h>

namespace timersim::bench {

std::size_t resident_bytes() {
    malloc_trim(0);
    // statm: size resident shared text lib data dt, in pages.
    std::ifstream statm("/proc/self/statm");
    std::size_t size = 0;
    std::size_t resident = 0;
    if (!(statm >> size >> resident)) return 0;
    return resident * static_cast<std::size_t>(sysconf(_SC_PAGESIZE));
}

} // namespace timersim::bench
