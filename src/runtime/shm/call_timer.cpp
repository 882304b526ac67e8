// runtime/shm/call_timer.cpp — see call_timer.hpp.
#include "runtime/shm/call_timer.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>
#include <optional>
#include <span>
#include <utility>

#include "multilane/collective.hpp"
#include "runtime/shm/upper_median.hpp"

namespace multilane::runtime::shm {

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::size_t kCachePurgeBytes = 64 << 20;  // larger than any last-level cache here

struct CallBuffers {
  std::vector<std::byte> send;
  std::vector<std::byte> recv;
};

CallBuffers buffers_for(Collective c, int rank, int p, std::uint64_t size) {
  CallBuffers b;
  b.send.assign(buffer_size(c, Buffer::Send, rank, p, 0, size), std::byte{1});
  b.recv.assign(buffer_size(c, Buffer::Recv, rank, p, 0, size), std::byte{0});
  return b;
}

// The tuning's geometry for the measurement's own calls; how they copy is left to the group
// (a tuning that forces one copy would make an 8-byte allgather a system call). An allgather
// needs a buffer of at least a byte per rank: below that, the group's default geometry.
std::optional<ShmTuning> same_geometry(const ShmTuning& tuning, int ranks) {
  if (tuning.buffer_size < static_cast<std::uint64_t>(ranks)) return std::nullopt;
  return ShmTuning{tuning.buffer_size, tuning.pipeline_buffers, CopyMode::Auto};
}

}  // namespace

CallTimer::CallTimer(ShmGroup& group, const CallTiming& timing) : group_(group), timing_(timing) {
  if (timing.purge_cache) purge_.assign(kCachePurgeBytes, std::byte{0});
}

double CallTimer::seconds_per_call(Collective c, std::uint64_t size, const ShmTuning& tuning) {
  const std::optional<ShmTuning> bookkeeping = same_geometry(tuning, group_.local_size());
  CallBuffers b = buffers_for(c, group_.local_rank(), group_.local_size(), size);
  // Warm-up: the first touches of the pages, and the change to this geometry.
  group_.run(c, b.send, b.recv, 0, tuning);
  std::vector<double> times;
  for (int rep = 0; rep < timing_.repetitions; ++rep) {
    if (!purge_.empty()) std::memset(purge_.data(), rep, purge_.size());
    // A barrier has no tuning of its own: it keeps the geometry of the call before it.
    group_.barrier();
    const auto start = Clock::now();
    for (int i = 0; i < timing_.iterations; ++i) group_.run(c, b.send, b.recv, 0, tuning);
    const double mine =
        std::chrono::duration<double>(Clock::now() - start).count() / timing_.iterations;
    times.push_back(slowest(mine, bookkeeping));
  }
  // The median: the least would reward a candidate for one lucky repetition, and a tuned
  // choice must hold in a benchmark that takes medians (bench/shm_bench.cpp).
  return upper_median(std::move(times));
}

// Every rank gets the same maximum, so that every rank makes the same choices (and so the
// same calls) from here on.
double CallTimer::slowest(double mine, const std::optional<ShmTuning>& bookkeeping) {
  std::vector<double> all(static_cast<std::size_t>(group_.local_size()));
  group_.allgather(std::as_bytes(std::span(&mine, 1)), std::as_writable_bytes(std::span(all)),
                   bookkeeping);
  return *std::max_element(all.begin(), all.end());
}

}  // namespace multilane::runtime::shm
