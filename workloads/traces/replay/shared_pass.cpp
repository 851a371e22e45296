#include "workloads/traces/replay/shared_pass.hpp"

#include "workloads/traces/input/trace_error.hpp"

#include <algorithm>
#include <stdexcept>
#include <utility>

namespace timersim {

SharedPass::SharedPass(TraceReopener reopen, std::size_t count, std::string file)
    : reopen_(std::move(reopen)), count_(count), file_(std::move(file)) {}

std::size_t SharedPass::slowest() const {
    std::size_t lowest = kLeft;
    for (const std::size_t k : lowest_) lowest = std::min(lowest, k);
    return lowest;
}

void SharedPass::trim() {
    // Chunks every reader has passed go, but the first kKept stay while a
    // replay starting late may still join (first_ == 0).
    const std::size_t passed = slowest();
    std::size_t drop = 0;
    while (drop < chunks_.size() && first_ + drop < passed && (first_ + drop > 0 || chunks_.size() > kKept)) ++drop;
    chunks_.erase(chunks_.begin(), chunks_.begin() + static_cast<std::ptrdiff_t>(drop));
    first_ += drop;
}

std::shared_ptr<const SharedPass::Chunk> SharedPass::chunk(std::size_t reader, std::size_t k) {
    std::unique_lock lock(mutex_);
    for (;;) {
        if (failed_) std::rethrow_exception(failed_);
        if (k < first_ || k < lowest_[reader]) throw std::logic_error("SharedPass: a chunk already let go");
        if (k < first_ + chunks_.size()) return chunks_[k - first_];
        if (k > first_ + chunks_.size()) throw std::logic_error("SharedPass: chunks are read in order");
        // The next chunk, unless another reader is reading it, or this one
        // is too far ahead of the slowest.
        if (reading_ || k >= slowest() + kMaxAhead) {
            changed_.wait(lock);
            continue;
        }
        reading_ = true;
        lock.unlock();
        std::shared_ptr<Chunk> next;
        std::exception_ptr error;
        try {
            next = std::make_shared<Chunk>();
            if (!source_) source_ = reopen_();
            const std::size_t end = std::min(count_, (k + 1) * kChunk);
            next->reserve(end - std::min(end, k * kChunk));
            TraceEvent e;
            for (std::size_t i = k * kChunk; i < end; ++i) {
                if (!source_->next(e))
                    throw TraceError(file_, source_->line(), "events",
                                     "the trace read again does not give the events it gave before");
                next->push_back(trace_store::stored_event(e));
            }
        } catch (...) {
            error = std::current_exception();
        }
        lock.lock();
        reading_ = false;
        if (error) failed_ = error;
        else chunks_.push_back(std::move(next));
        trim();
        changed_.notify_all();
    }
}

void SharedPass::release(std::size_t reader, std::size_t k) {
    const std::lock_guard lock(mutex_);
    if (k <= lowest_[reader]) return;
    lowest_[reader] = k;
    trim();
    changed_.notify_all();
}

void SharedPass::leave(std::size_t reader) {
    const std::lock_guard lock(mutex_);
    lowest_[reader] = kLeft;
    trim();
    changed_.notify_all();
}

SharedPass::Reader::~Reader() {
    if (pass_) pass_->leave(id_);
}

std::shared_ptr<const SharedPass::Chunk> SharedPass::Reader::chunk(std::size_t k) { return pass_->chunk(id_, k); }

void SharedPass::Reader::release(std::size_t k) { pass_->release(id_, k); }

SharedPass::Reader SharedPasses::join(const TraceReopener& reopen, std::size_t count, const std::string& file) {
    const std::lock_guard lock(mutex_);
    std::shared_ptr<SharedPass> pass = current_.lock();
    if (pass) {
        // Joinable while it still has its first chunk and has not failed.
        const std::lock_guard pass_lock(pass->mutex_);
        if (pass->first_ == 0 && !pass->failed_) {
            pass->lowest_.push_back(0);
            ++counts_.joined;
            return SharedPass::Reader(pass, pass->lowest_.size() - 1);
        }
    }
    pass = std::make_shared<SharedPass>(reopen, count, file);
    pass->lowest_.push_back(0);
    current_ = pass;
    ++counts_.passes;
    return SharedPass::Reader(pass, 0);
}

SharedPass::Counts SharedPasses::counts() const {
    const std::lock_guard lock(mutex_);
    return counts_;
}

} // namespace timersim
