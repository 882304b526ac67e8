// runtime/shm/tune.cpp — see tune.hpp.
#include "runtime/shm/tune.hpp"

#include <fmt/format.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstring>
#include <limits>
#include <random>

#include "multilane/errors.hpp"
#include "runtime/shm/layout.hpp"

namespace multilane::runtime::shm {

namespace {

constexpr int kConfirmRounds = 3;  // the winner against the default, each a median already

void check_request(const TuneRequest& r) {
  if (r.ranks < 1 || r.ranks > kMaxLocalSize) {
    throw UsageError(fmt::format("ranks {} is outside 1..{}", r.ranks, kMaxLocalSize));
  }
  if (r.collectives.empty() || r.sizes.empty() || r.buffer_sizes.empty() || r.depths.empty()) {
    throw UsageError("tune shm: collectives, sizes, buffer sizes and depths must not be empty");
  }
  for (std::uint64_t b : r.buffer_sizes) {
    if (b < 64) throw UsageError(fmt::format("buffer size {} is below 64 bytes", b));
  }
  for (int d : r.depths) {
    if (d < 1 || d > kMaxPipelineBuffers) {
      throw UsageError(fmt::format("pipeline depth {} is outside 1..{}", d, kMaxPipelineBuffers));
    }
  }
  if (r.timing.iterations < 1 || r.timing.repetitions < 1) {
    throw UsageError("tune shm: iterations and repetitions must be at least 1");
  }
}

bool fits(Collective c, const ShmTuning& t, int ranks) {
  return c != Collective::Allgather || t.buffer_size >= static_cast<std::uint64_t>(ranks);
}

// The best of many noisy candidates against one measurement of the default would favour the
// candidates: measure the winner and the default again, alternately, and keep the winner only
// if it still wins. Only these new measurements count on either side: the winner's time from
// the sweep is the least of many and so lower than its own typical time.
void confirm(CallTimer& timer, TuneResult& result, int rounds) {
  const ShmTuning default_tuning{};
  if (result.best == default_tuning) return;
  double best = std::numeric_limits<double>::infinity();
  double fallback = best;
  for (int i = 0; i < rounds; ++i) {
    fallback =
        std::min(fallback, timer.seconds_per_call(result.collective, result.size, default_tuning));
    best = std::min(best, timer.seconds_per_call(result.collective, result.size, result.best));
  }
  result.default_s = fallback;
  result.best_s = best;
  if (best >= fallback) {
    result.best = default_tuning;
    result.best_s = fallback;
  }
}

// Every way to run the call that the sweep tries besides the default: one copy where the
// kernel allows it (the default may not use it at this size), and the paper's two copies over
// the grid of buffer sizes and depths (the default may copy once at this size).
std::vector<ShmTuning> candidates(const ShmGroup& group, const TuneRequest& r, Collective c,
                                  std::uint64_t size) {
  std::vector<ShmTuning> out;
  ShmTuning once;
  once.copies = CopyMode::Once;
  if (!group.copies_once(c, size, ShmTuning{}) && group.copies_once(c, size, once)) {
    out.push_back(once);
  }
  for (std::uint64_t b : r.buffer_sizes) {
    for (int d : r.depths) {
      const ShmTuning t{b, d, CopyMode::Twice};
      if (fits(c, t, r.ranks)) out.push_back(t);
    }
  }
  return out;
}

// The whole sweep, run identically by every rank (they all see the same measurements).
std::vector<TuneResult> sweep(ShmGroup& group, const TuneRequest& r) {
  CallTimer timer(group, r.timing);
  std::vector<TuneResult> results;
  for (Collective c : r.collectives) {
    for (std::uint64_t size : r.sizes) {
      TuneResult result;
      result.collective = c;
      result.size = size;
      result.default_s = timer.seconds_per_call(c, size, ShmTuning{});
      result.best = ShmTuning{};
      result.best_s = result.default_s;
      for (const ShmTuning& t : candidates(group, r, c, size)) {
        const double s = timer.seconds_per_call(c, size, t);
        if (s < result.best_s) {
          result.best = t;
          result.best_s = s;
        }
      }
      confirm(timer, result, kConfirmRounds);
      result.single_copy = group.copies_once(c, size, result.best);
      results.push_back(result);
    }
  }
  return results;
}

ShmOptions options_for(const TuneRequest& r) {
  ShmOptions o;
  o.timeout = r.timeout;
  std::uint64_t capacity = data_bytes(
      {ShmTuning{}.buffer_size, static_cast<std::uint32_t>(ShmTuning{}.pipeline_buffers)});
  for (std::uint64_t b : r.buffer_sizes) {
    for (int d : r.depths) {
      capacity = std::max(capacity, data_bytes({b, static_cast<std::uint32_t>(d)}));
    }
  }
  o.capacity = capacity;
  return o;
}

void stop_children(const std::vector<pid_t>& children, bool kill_them) {
  for (pid_t child : children) {
    if (kill_them) kill(child, SIGKILL);
    int status = 0;
    waitpid(child, &status, 0);
  }
}

}  // namespace

std::vector<TuneResult> tune_shm(const TuneRequest& request) {
  check_request(request);
  const std::uint64_t job = std::random_device{}() ^ (static_cast<std::uint64_t>(getpid()) << 32);
  const ShmOptions options = options_for(request);
  std::vector<pid_t> children;
  for (int rank = 1; rank < request.ranks; ++rank) {
    const pid_t pid = fork();
    if (pid < 0) {
      stop_children(children, true);
      throw CommunicationError(ErrorKind::resource,
                               fmt::format("tune shm: fork failed: {}", std::strerror(errno)));
    }
    if (pid == 0) {
      int status = 0;
      try {
        ShmGroup group(job, 0, rank, request.ranks, options);
        sweep(group, request);
      } catch (const std::exception& e) {
        fmt::print(stderr, "multilane tune shm: local rank {}: {}\n", rank, e.what());
        status = 1;
      }
      _exit(status);
    }
    children.push_back(pid);
  }
  try {
    std::vector<TuneResult> results;
    {
      ShmGroup group(job, 0, 0, request.ranks, options);
      results = sweep(group, request);
    }
    stop_children(children, false);
    return results;
  } catch (...) {
    stop_children(children, true);
    throw;
  }
}

}  // namespace multilane::runtime::shm
