// bench/copy_costs.cpp — what this machine charges for the shared-memory layer's raw moves:
// the round trip of one cache line between two cores, a copy within one process (copy_bytes,
// the two-copy path's unit) and the kernel's copy out of another process (process_vm_readv,
// the single-copy path's unit). The collectives of src/runtime/shm are built from these, so
// their costs explain the ratios of bench/compare-shm.sh (docs/performance.md).
//
//   copy_costs [--sizes 4KiB,32KiB,...] [--repetitions N] [--latency-only]
//
// The round trip is the median of 5 batches of ping-pong between two threads bound as two
// ranks of `multilane launch` are (runtime/launch/rank_binding.hpp: two cores, not two hardware
// threads of one). On a virtual machine it changes when the hypervisor moves the virtual CPUs,
// and compare-shm.sh prints it before every run for that reason.
// Copies are timed over N repetitions (fewer for large sizes: at most 64 MiB copied per cell),
// hot in cache, as in shm_bench; the reported value is the mean. Every loop is bounded.
#include <fmt/format.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>
#include <vector>

#include "multilane/units.hpp"
#include "runtime/launch/rank_binding.hpp"
#include "runtime/shm/copy_bytes.hpp"
#include "runtime/shm/cross_memory.hpp"

namespace {

using Clock = std::chrono::steady_clock;
using multilane::format_size;
namespace shm = multilane::runtime::shm;

double seconds_since(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

void bind_this_thread(int cpu) {
  cpu_set_t mask;
  CPU_ZERO(&mask);
  CPU_SET(cpu, &mask);
  pthread_setaffinity_np(pthread_self(), sizeof mask, &mask);  // refused: runs unbound
}

// One batch of `rounds` ping-pongs of one cache line; nanoseconds per round trip.
double round_trip_ns(int here, int there, long rounds) {
  alignas(64) std::atomic<long> ping{0};
  alignas(64) std::atomic<long> pong{0};
  std::thread partner([&] {
    bind_this_thread(there);
    for (long i = 1; i <= rounds; ++i) {
      while (ping.load(std::memory_order_acquire) != i) {
      }
      pong.store(i, std::memory_order_release);
    }
  });
  bind_this_thread(here);
  const auto start = Clock::now();
  for (long i = 1; i <= rounds; ++i) {
    ping.store(i, std::memory_order_release);
    while (pong.load(std::memory_order_acquire) != i) {
    }
  }
  const double elapsed = seconds_since(start);
  partner.join();
  return elapsed / static_cast<double>(rounds) * 1e9;
}

double median_round_trip_ns(const std::vector<int>& cpus) {
  std::vector<double> batches;
  for (int b = 0; b < 5; ++b) batches.push_back(round_trip_ns(cpus[0], cpus[1], 100000));
  std::sort(batches.begin(), batches.end());
  return batches[2];
}

// A child process (a copy of this one) that waits until its parent closes the pipe (or dies), so
// that the parent can read its memory with the kernel's cross-process copy.
class Holder {
 public:
  explicit Holder(int cpu) {
    int fds[2];
    if (pipe(fds) != 0) throw std::runtime_error("copy_costs: pipe failed");
    pid_ = fork();
    if (pid_ < 0) throw std::runtime_error("copy_costs: fork failed");
    if (pid_ == 0) {
      prctl(PR_SET_PDEATHSIG, SIGKILL);
      close(fds[1]);
      if (cpu >= 0) bind_this_thread(cpu);
      char c;
      while (read(fds[0], &c, 1) < 0) {
      }
      _exit(0);
    }
    close(fds[0]);
    release_ = fds[1];
  }
  ~Holder() {
    close(release_);
    waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }

 private:
  pid_t pid_ = -1;
  int release_ = -1;
};

// Page-aligned memory for `length` bytes 16 bytes into it, filled with a pattern.
class PageBlock {
 public:
  explicit PageBlock(std::uint64_t length) {
    const std::size_t room = (length + 2 * kPage) / kPage * kPage;
    bytes_ = static_cast<std::byte*>(std::aligned_alloc(kPage, room));
    if (bytes_ == nullptr) {
      throw std::runtime_error(fmt::format("copy_costs: cannot allocate {}", format_size(room)));
    }
    std::memset(bytes_, 0x5a, room);
  }
  ~PageBlock() { std::free(bytes_); }
  PageBlock(const PageBlock&) = delete;
  PageBlock& operator=(const PageBlock&) = delete;
  std::byte* bytes() const { return bytes_; }

 private:
  static constexpr std::size_t kPage = 4096;
  std::byte* bytes_ = nullptr;
};

template <typename Copy>
double mean_us(long repetitions, Copy copy) {
  for (long i = 0; i < std::min(repetitions, 20L); ++i) copy();  // warm up
  const auto start = Clock::now();
  for (long i = 0; i < repetitions; ++i) copy();
  return seconds_since(start) / static_cast<double>(repetitions) * 1e6;
}

struct Options {
  std::string sizes = "4KiB,16KiB,32KiB,128KiB,1MiB";
  long repetitions = 2000;
  bool latency_only = false;
};

int run(const Options& options) {
  std::vector<std::uint64_t> sizes;
  try {
    sizes = multilane::parse_size_list(options.sizes);
  } catch (const std::exception& e) {
    throw std::runtime_error(fmt::format("--sizes: {}", e.what()));
  }
  const std::uint64_t largest = *std::max_element(sizes.begin(), sizes.end());
  if (largest > (1ull << 30)) throw std::runtime_error("--sizes: at most 1 GiB per copy");
  // Two ranks' placement under `multilane launch`: the first hardware thread of two cores.
  const std::vector<int> cpus =
      multilane::runtime::rank_units_here(2, multilane::runtime::RankBinding::Auto);
  if (cpus[0] < 0) {
    fmt::print("core-to-core round trip: - (this process may use one core only)\n");
  } else {
    fmt::print("core-to-core round trip: {:.0f} ns (CPUs {} and {})\n", median_round_trip_ns(cpus),
               cpus[0], cpus[1]);
  }
  if (options.latency_only) return 0;
  // Page-aligned source; the destination 16 bytes into a page, where a large malloc block
  // starts (the case copy_bytes exists for).
  const PageBlock source_block(largest), target_block(largest);
  std::byte* source = source_block.bytes();
  std::byte* target = target_block.bytes();
  if (cpus[0] >= 0) bind_this_thread(cpus[0]);
  const Holder holder(cpus[1]);  // its copy of `source` (fork) is what is read
  const auto remote = reinterpret_cast<std::uintptr_t>(source);
  fmt::print("\n| size | copy_bytes (us) | process_vm_readv (us) | kernel / copy_bytes |\n");
  fmt::print("|---|---|---|---|\n");
  for (const std::uint64_t size : sizes) {
    const long repetitions = std::max(
        10L, std::min<long>(options.repetitions,
                            static_cast<long>((64 << 20) / std::max<std::uint64_t>(size, 1))));
    const double local = mean_us(repetitions, [&] { shm::copy_bytes(target + 16, source, size); });
    std::string error;
    const double kernel = mean_us(repetitions, [&] {
      if (error.empty()) {
        error = shm::read_process_memory(holder.pid(), remote, target + 16, size).error;
      }
    });
    if (!error.empty()) throw std::runtime_error("copy_costs: " + error);
    fmt::print("| {} | {:.2f} | {:.2f} | {:.1f} |\n", format_size(size), local, kernel,
               kernel / std::max(local, 1e-9));
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  CLI::App app{"What the shared-memory layer's raw moves cost on this machine"};
  Options options;
  app.add_option("--sizes", options.sizes, "copy sizes, e.g. 4KiB,32KiB,1MiB");
  app.add_option("--repetitions", options.repetitions, "copies per cell (fewer for large sizes)")
      ->check(CLI::Range(1L, 1000000L));
  app.add_flag("--latency-only", options.latency_only, "only the core-to-core round trip");
  CLI11_PARSE(app, argc, argv);
  try {
    return run(options);
  } catch (const std::exception& e) {
    fmt::print(stderr, "{}\n", e.what());
    return 1;
  }
}
