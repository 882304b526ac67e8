// bench/shm_overhead.cpp — our own software cost per small shared-memory call, without the
// machine's cache-line transfers (Google Benchmark).
//
// Both ranks of a two-rank group live in this process and one thread runs both: every
// iteration prepares the call on each rank (argument check, copy-path choice, call record and
// fingerprint, plan cache) and then performs their steps in turns, each rank as far as it can
// go, with the same startable()/perform() an executor uses. All shared lines stay in this
// core's cache, so the time is the software of two ranks' calls and nothing of the machine;
// docs/performance.md sets it beside the cross-core time of the same calls (shm_bench) and the
// cache-line floor. Its sizes stay below the copy-path learner's classes (4 KiB and up), whose
// timing needs ShmGroup::run(). The `_cold` variants first empty this core's L1 and L2 caches,
// as code run between two calls does: their time counts the lines a call touches.
//
//   build/bench/shm_overhead [--benchmark_filter=alltoall] [--benchmark_repetitions=5]
#include <benchmark/benchmark.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include "multilane/collective.hpp"
#include "runtime/shm/shm_group.hpp"

namespace {

using multilane::Buffer;
using multilane::Collective;
using multilane::runtime::shm::ShmGroup;

constexpr int kRanks = 2;
constexpr int kRoot = 0;

// The two ranks of one group, attached from two threads (each constructor waits for the other).
class TwoRanks {
 public:
  explicit TwoRanks(std::uint32_t instance) {
    multilane::runtime::shm::ShmOptions options;
    options.instance = instance;
    const auto job = static_cast<std::uint64_t>(getpid());
    std::thread second([&] { ranks_[1].emplace(job, 0, 1, kRanks, options); });
    ranks_[0].emplace(job, 0, 0, kRanks, options);
    second.join();
  }
  ShmGroup& operator[](int rank) { return *ranks_[static_cast<std::size_t>(rank)]; }

 private:
  std::array<std::optional<ShmGroup>, kRanks> ranks_;
};

struct RankBuffers {
  std::vector<std::byte> send, recv;
};

RankBuffers buffers_for(Collective collective, int rank, std::uint64_t size) {
  const auto bytes = [&](Buffer buffer) {
    return multilane::buffer_size(collective, buffer, rank, kRanks, kRoot, size);
  };
  return {std::vector<std::byte>(bytes(Buffer::Send), std::byte{1}),
          std::vector<std::byte>(bytes(Buffer::Recv))};
}

// One call of both ranks, their steps in turns; false if neither rank could move.
bool run_call(TwoRanks& group, Collective collective, std::array<RankBuffers, kRanks>& data) {
  std::vector<multilane::runtime::shm::ShmStepwiseCall> calls;
  for (int r = 0; r < kRanks; ++r) {
    RankBuffers& mine = data[static_cast<std::size_t>(r)];
    calls.push_back(group[r].begin(collective, mine.send, mine.recv, kRoot, std::nullopt));
  }
  std::array<std::size_t, kRanks> next{};
  for (bool moved = true; moved;) {
    moved = false;
    for (std::size_t r = 0; r < calls.size(); ++r) {
      while (next[r] < calls[r].steps() && calls[r].startable(next[r])) {
        calls[r].perform(next[r]++);
        moved = true;
      }
    }
  }
  const bool done = next[0] == calls[0].steps() && next[1] == calls[1].steps();
  if (done) {
    for (auto& call : calls) call.finish();
  }
  return done;
}

// Both ranks' calls, one after another in this thread. With `cold`, each call first finds this
// core's caches emptied of it, as between two calls of a benchmark or of an application that
// computes in between other code and data take the private caches (in shm_bench a call's
// prepare() costs about three times as much as when it is called twice in a row). Writing a
// block twice the size of the L2 cache moves everything else out of L1
// and L2; the calls then come from L3 or memory, so the time counts how many lines of code and
// data a call touches. Only the call is timed then (manual time).
void two_ranks_in_one_thread(benchmark::State& state, Collective collective, bool cold) {
  static std::uint32_t instance = 0;
  TwoRanks group(++instance);
  const auto size = static_cast<std::uint64_t>(state.range(0));
  std::array<RankBuffers, kRanks> data{buffers_for(collective, 0, size),
                                       buffers_for(collective, 1, size)};
  std::vector<unsigned char> evict(cold ? 4 << 20 : 0);
  unsigned char round = 0;
  for (auto _ : state) {
    std::chrono::steady_clock::time_point start;
    if (cold) {
      std::fill(evict.begin(), evict.end(), ++round);
      benchmark::ClobberMemory();
      start = std::chrono::steady_clock::now();
    }
    const bool done = run_call(group, collective, data);
    benchmark::ClobberMemory();
    if (cold) {
      state.SetIterationTime(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    }
    if (!done) {
      state.SkipWithError("the two ranks' steps cannot both finish in one thread");
      break;
    }
  }
  state.SetLabel(cold ? "both ranks' software per call, from outside L1 and L2"
                      : "both ranks' software per call, no cache-line transfers");
}

constexpr std::array<std::pair<const char*, Collective>, 5> kCollectives{{
    {"bcast", Collective::Bcast},
    {"scatter", Collective::Scatter},
    {"gather", Collective::Gather},
    {"allgather", Collective::Allgather},
    {"alltoall", Collective::Alltoall},
}};

const bool registered = [] {
  for (const auto& [name, collective] : kCollectives) {
    benchmark::RegisterBenchmark((std::string(name) + "/two_ranks_one_thread").c_str(),
                                 two_ranks_in_one_thread, collective, false)
        ->Arg(8)
        ->Arg(64)
        ->Arg(512);
    benchmark::RegisterBenchmark((std::string(name) + "/two_ranks_one_thread_cold").c_str(),
                                 two_ranks_in_one_thread, collective, true)
        ->Arg(8)
        ->Arg(512)
        ->Iterations(3000)  // each clears the caches first (about 0.2 ms), outside the time
        ->UseManualTime();
  }
  return true;
}();

}  // namespace

BENCHMARK_MAIN();
