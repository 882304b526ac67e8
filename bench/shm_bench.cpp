// bench/shm_bench.cpp — multilane's shared-memory collectives beside Open MPI's, in one MPI run.
//
//   mpirun -n 2 --mca btl vader,self build/bench/shm_bench [--collectives bcast,scatter,...]
//          [--sizes 8,64,...,16MiB] [--buffer-size 32KiB] [--pipeline-buffers 16]
//          [--purge-cache 2.5MiB] [--budget 0.5] [--spin-us 50] [--tuning FILE]
//          [--shared-buffers] [--kernel-copy-floor] [--cache-line-floor]
//
// Every rank of the run is one local rank of a ShmGroup (all ranks must share one node). For
// each collective and size the two implementations take turns, repetition by repetition, with
// the SMP paper's method (section 7): optional cache purge, MPI_Barrier, time the call, then
// MPI_Allreduce(MAX) of the times, so a repetition counts from the first rank's start to the
// last rank's end. The table gives the median over repetitions of both and the ratio MPI / ours
// (above 1: ours is faster). `size` is the collective's size as in multilane/collective.hpp:
// the whole message for bcast, one rank's block otherwise. Before timing, each size is run once
// by both and the results compared byte for byte. With --shared-buffers both get the same
// buffers from multilane::SharedBuffer instead of std::vector. Each implementation has its own
// buffers (--buffers separate): on shared ones each finds the lines where the other left them,
// so Open MPI's time would depend on which plan ours took.
//
// --kernel-copy-floor and --cache-line-floor add a floor column: the time of the bare moves that
// every implementation of a family must make, with no protocol at all (shm_floors.hpp), so that
// Open MPI / floor is the most that any such implementation could gain over Open MPI here. The
// kernel-copy floor covers alltoall and allgather (one process_vm_readv per block), the
// cache-line floor blocks of at most 1016 bytes in every collective (the fewest cache lines
// that hold the block and a flag); where both cover a call, the cache-line floor is shown, the
// lower bound for every implementation.
#include <fmt/format.h>

#include <mpi.h>
#include <unistd.h>
#include <CLI/CLI.hpp>
#include <stdexcept>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <functional>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <vector>

#include "multilane/collective.hpp"
#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "runtime/check/bench_buffer.hpp"
#include "runtime/shm/shm_group.hpp"
#include "runtime/shm/topology.hpp"
#include "runtime/shm/tuning_file.hpp"
#include "shm_floors.hpp"

namespace multilane::shm_bench {
namespace {

using runtime::shm::ShmGroup;
using runtime::shm::ShmOptions;

struct Options {
  std::string collectives = "bcast,scatter,gather,alltoall";
  std::string sizes = "8,64,512,4KiB,32KiB,128KiB,1MiB,4MiB,16MiB";
  std::string buffer_size;  // empty: the layer's default (ShmTuning)
  int pipeline_buffers = runtime::shm::ShmTuning{}.pipeline_buffers;
  double spin_us = -1;                    // negative: the layer's default
  std::string yield_polling;              // empty: the layer's default
  std::string purge_cache;                // empty: no purge
  std::string single_copy_from = "auto";  // "0": the paper's two copies at every size
  std::string learn_copy_path = "on";     // off: the single-copy limits alone decide
  std::string learn_root_share = "on";    // off: rooted single copies keep the default share
  std::string start = "auto";   // together, or barrier (each rank starts as it leaves MPI_Barrier)
  std::string tuning;           // a tuning file (multilane tune shm); empty: none
  bool shared_buffers = false;  // both use SharedBuffers instead of their own memory
  std::string buffers = "separate";  // same: both implementations use the same buffers
  long page_offset = -1;             // buffers this far past a page start; -1: malloc's
  bool kernel_copy_floor = false;    // also time the bare kernel copies (alltoall, allgather)
  bool cache_line_floor = false;     // also time the fewest lines per block (small blocks)
  double budget = 0.5;               // seconds per collective and size (both implementations)
  int min_repetitions = 31;
  int max_repetitions = 1001;
};

std::string single_copy_text(const runtime::shm::ShmGroup& group) {
  const auto& limits = group.single_copy_limits();
  if (!group.single_copy_allowed() || limits.from == 0) return "never";
  return "from " + format_size(limits.from) + ", bcast from " + format_size(limits.bcast_from) +
         ", gather from " + format_size(limits.gather_from);
}

struct Buffers {
  runtime::BenchBuffer send, recv;
};

// The rank's buffers for the call, input filled with a pattern that depends on rank and place.
Buffers buffers_for(Collective collective, int rank, int ranks, std::uint64_t size, bool shared,
                    long page_offset) {
  const auto memory = shared ? runtime::BenchMemory::Shared : runtime::BenchMemory::Application;
  Buffers b{runtime::BenchBuffer(buffer_size(collective, Buffer::Send, rank, ranks, 0, size),
                                 memory, page_offset),
            runtime::BenchBuffer(buffer_size(collective, Buffer::Recv, rank, ranks, 0, size),
                                 memory, page_offset)};
  const auto input = input_buffer(collective) == Buffer::Send ? b.send.bytes() : b.recv.bytes();
  for (std::size_t i = 0; i < input.size(); ++i) {
    input[i] = static_cast<std::byte>((i * 131 + static_cast<std::size_t>(rank) * 29 + 1) & 0xff);
  }
  return b;
}

// MPI's version of the collective, root 0; `recv` as in collective.hpp.
void run_mpi(Collective collective, std::uint64_t size, std::span<const std::byte> send,
             std::span<std::byte> recv) {
  const int count = static_cast<int>(size);
  void* in = const_cast<std::byte*>(send.data());
  switch (collective) {
    case Collective::Bcast:
      MPI_Bcast(recv.data(), count, MPI_BYTE, 0, MPI_COMM_WORLD);
      return;
    case Collective::Scatter:
      MPI_Scatter(in, count, MPI_BYTE, recv.data(), count, MPI_BYTE, 0, MPI_COMM_WORLD);
      return;
    case Collective::Gather:
      MPI_Gather(in, count, MPI_BYTE, recv.data(), count, MPI_BYTE, 0, MPI_COMM_WORLD);
      return;
    case Collective::Allgather:
      MPI_Allgather(in, count, MPI_BYTE, recv.data(), count, MPI_BYTE, MPI_COMM_WORLD);
      return;
    case Collective::Alltoall:
      MPI_Alltoall(in, count, MPI_BYTE, recv.data(), count, MPI_BYTE, MPI_COMM_WORLD);
      return;
    case Collective::Reduce:
    case Collective::Allreduce:
    case Collective::ReduceScatter:
    case Collective::Gatherv:
    case Collective::Scatterv:
    case Collective::Allgatherv:
    case Collective::Alltoallv:
    case Collective::Scan:
    case Collective::Exscan:
    case Collective::ReduceScatterv:
      break;
  }
  throw std::invalid_argument(
      fmt::format("{} has no shared-memory group call to compare", to_string(collective)));
}

// With the tuning file's entry for the call, if any (else the group's tuning).
void run_ours(ShmGroup& group, const runtime::shm::TuningTable& tuning, Collective collective,
              std::uint64_t size, std::span<const std::byte> send, std::span<std::byte> recv) {
  group.run(collective, send, recv, 0, tuning.find(collective, size));
}

// Writes every byte of a block as large as the cache (the paper's purge), outside the timing.
void purge(std::vector<std::byte>& block) {
  static unsigned char value = 0;
  std::memset(block.data(), ++value, block.size());
}

// How one repetition is timed: the paper's method (a barrier, each rank times its call, the
// repetition takes the slowest rank's time), with the ranks started together. After
// MPI_Barrier the ranks leave with a skew that depends on Open MPI's state (one MPI_Bcast more
// or less before the measurements changes it), and that skew counts in the slowest rank's
// time, which for an 8-byte call is mostly skew. The ranks
// of this benchmark share one node and so one clock, so by default they agree on an instant
// 20 us ahead and each starts its call there; `--start barrier` starts at the barrier instead.
struct Repetition {
  std::vector<std::byte>& purge_block;
  bool start_together = true;
};

// The instant all ranks start at: 20 us after the latest of them got here.
std::chrono::steady_clock::time_point common_start() {
  using namespace std::chrono;
  std::int64_t at =
      duration_cast<nanoseconds>((steady_clock::now() + microseconds(20)).time_since_epoch())
          .count();
  MPI_Allreduce(MPI_IN_PLACE, &at, 1, MPI_INT64_T, MPI_MAX, MPI_COMM_WORLD);
  const steady_clock::time_point start{duration_cast<steady_clock::duration>(nanoseconds(at))};
  while (steady_clock::now() < start) {
  }
  return start;
}

// One repetition; returns the slowest rank's time in seconds.
template <typename Call>
double time_once(Call call, const Repetition& how) {
  if (!how.purge_block.empty()) purge(how.purge_block);
  MPI_Barrier(MPI_COMM_WORLD);
  const auto start = how.start_together ? common_start() : std::chrono::steady_clock::now();
  call();
  const double mine =
      std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  double slowest = 0;
  MPI_Allreduce(&mine, &slowest, 1, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD);
  return slowest;
}

double median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

// Aborts the run when `result` differs from MPI's.
void expect_mpi_result(std::span<const std::byte> result, std::span<const std::byte> mpi,
                       const char* who, Collective collective, std::uint64_t size, int rank) {
  if (std::ranges::equal(result, mpi)) return;
  fmt::print(stderr, "rank {}: {} of {}: {} result differs from MPI's\n", rank, who,
             to_string(collective), format_size(size));
  MPI_Abort(MPI_COMM_WORLD, 1);
}

// Both implementations once, results compared; returns MPI's result.
std::vector<std::byte> check_same_result(ShmGroup& group, const runtime::shm::TuningTable& tuning,
                                         Collective collective, std::uint64_t size, int rank,
                                         int ranks, bool shared) {
  const Buffers ours = buffers_for(collective, rank, ranks, size, shared, -1);
  const Buffers theirs = buffers_for(collective, rank, ranks, size, shared, -1);
  run_ours(group, tuning, collective, size, ours.send.bytes(), ours.recv.bytes());
  run_mpi(collective, size, theirs.send.bytes(), theirs.recv.bytes());
  expect_mpi_result(ours.recv.bytes(), theirs.recv.bytes(), "shared-memory", collective, size,
                    rank);
  return {theirs.recv.bytes().begin(), theirs.recv.bytes().end()};
}

// The floors a run measures (shm_floors.hpp).
struct Floors {
  bool kernel_copy = false;
  std::optional<CacheLineFloor> cache_line;  // constructed once: it allocates shared memory
};

// A floor that covers the call, as a call on `b`: the cache-line floor where it covers the call
// (the bound for every implementation), else the kernel-copy floor. Empty when none does.
struct FloorCall {
  std::string kind;  // "cache line", "kernel copy"
  std::function<void()> call;
};

FloorCall floor_for(Floors& floors, Collective collective, std::uint64_t size, int ranks,
                    const Buffers& b) {
  if (floors.cache_line && CacheLineFloor::covers(collective, size, ranks)) {
    CacheLineFloor& floor = *floors.cache_line;
    return {"cache line", [&floor, &b, collective, size] {
              floor.run(collective, size, b.send.bytes(), b.recv.bytes());
            }};
  }
  if (floors.kernel_copy && KernelCopyFloor::covers(collective, size, ranks)) {
    auto floor = std::make_shared<const KernelCopyFloor>(collective, size, b.send.bytes());
    return {"kernel copy", [floor, &b] { floor->run(b.send.bytes(), b.recv.bytes()); }};
  }
  return {};
}

struct Row {
  double ours = 0, mpi = 0;
  double floor = 0;        // 0: not measured
  std::string floor_kind;  // which floor
  int repetitions = 0;
  double copied_once = 0;            // share of our timed calls that copied once
  std::optional<double> root_share;  // what the root copies of the others' blocks, at the end
};

Row measure(ShmGroup& group, const runtime::shm::TuningTable& tuning, Collective collective,
            std::uint64_t size, const Options& options, Floors& floors,
            const Repetition& repetition, int rank, int ranks) {
  const std::vector<std::byte> expected =
      check_same_result(group, tuning, collective, size, rank, ranks, options.shared_buffers);
  const auto make_buffers = [&] {
    return buffers_for(collective, rank, ranks, size, options.shared_buffers, options.page_offset);
  };
  // Separate buffers: neither implementation finds the cache lines where the other left them.
  const Buffers b = make_buffers();
  std::optional<Buffers> separate;
  if (options.buffers == "separate") separate.emplace(make_buffers());
  const Buffers& mpi_b = separate ? *separate : b;
  const auto ours = [&] {
    run_ours(group, tuning, collective, size, b.send.bytes(), b.recv.bytes());
  };
  const auto mpi = [&] { run_mpi(collective, size, mpi_b.send.bytes(), mpi_b.recv.bytes()); };
  const FloorCall floor = floor_for(floors, collective, size, ranks, mpi_b);
  if (floor.call) {  // a floor that moves the wrong bytes would bound nothing
    MPI_Barrier(MPI_COMM_WORLD);
    floor.call();
    expect_mpi_result(mpi_b.recv.bytes(), expected, floor.kind.c_str(), collective, size, rank);
  }
  // Repetitions from an estimate, the same on every rank (times are maxima over ranks); the
  // best of three, so that one preemption does not cut the run short.
  double estimate = 1e9;
  for (int i = 0; i < 3; ++i) {
    estimate = std::min(estimate, time_once(ours, repetition) + time_once(mpi, repetition));
  }
  int repetitions = static_cast<int>(options.budget / std::max(estimate, 1e-7));
  repetitions = std::clamp(repetitions, options.min_repetitions, options.max_repetitions) | 1;
  Row row;
  row.repetitions = repetitions;
  std::vector<double> ours_times, mpi_times, floor_times;
  const std::uint64_t once_before = group.calls_copied_once();
  for (int i = 0; i < repetitions; ++i) {  // taking turns: drift in the machine hits all
    ours_times.push_back(time_once(ours, repetition));
    mpi_times.push_back(time_once(mpi, repetition));
    if (floor.call) floor_times.push_back(time_once(floor.call, repetition));
  }
  if (floor.call) {
    row.floor = median(floor_times);
    row.floor_kind = floor.kind;
  }
  row.copied_once = static_cast<double>(group.calls_copied_once() - once_before) / repetitions;
  if (row.copied_once > 0) row.root_share = group.root_share(collective, size, 0);
  row.ours = median(ours_times);
  row.mpi = median(mpi_times);
  return row;
}

std::string microseconds(double seconds) {
  return fmt::format("{:.2f}", seconds * 1e6);
}

int run(int argc, char** argv) {
  Options options;
  CLI::App app{"multilane shared-memory collectives beside Open MPI's (run under mpirun)"};
  app.add_option("--collectives", options.collectives, "comma-separated collectives");
  app.add_option("--sizes", options.sizes, "comma-separated sizes (bcast: message, else block)");
  app.add_option("--buffer-size", options.buffer_size, "pipeline buffer size B");
  app.add_option("--pipeline-buffers", options.pipeline_buffers, "pipeline buffers (1..64)");
  app.add_option("--spin-us", options.spin_us, "polling before sleeping (default: automatic)");
  app.add_option("--yield-polling", options.yield_polling,
                 "poll with sched_yield instead of a pause: on or off (default: automatic)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--purge-cache", options.purge_cache, "bytes written before each repetition");
  app.add_option("--single-copy-from", options.single_copy_from,
                 "copy once (cross-memory attach) from this size per copy on (also for bcast); "
                 "0: never; auto: the layer's default");
  app.add_option("--learn-copy-path", options.learn_copy_path,
                 "alltoall, allgather, bcast and scatter learn as they run whether copying once or "
                 "twice is "
                 "faster (with --single-copy-from auto): on or off")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--learn-root-share", options.learn_root_share,
                 "bcast, scatter and gather copied once: the root learns as it runs how much of "
                 "the others' blocks to copy itself: on or off (the default share)")
      ->check(CLI::IsMember({"on", "off"}));
  app.add_option("--start", options.start,
                 "together: after MPI_Barrier the ranks agree on an instant 20 us ahead and start "
                 "their calls there (one node, one clock); barrier: each starts as it leaves "
                 "MPI_Barrier, whose exit skew then counts (the paper's method); auto: together "
                 "unless there are more ranks than hardware threads (a rank spinning to the "
                 "instant would keep one that shares its core from getting there)")
      ->check(CLI::IsMember({"auto", "together", "barrier"}));
  app.add_option("--tuning", options.tuning,
                 "tuning file (multilane tune shm) for ours; calls it covers use its entries");
  app.add_option("--page-offset", options.page_offset,
                 "place every buffer this many bytes past a page boundary (0..4095; default: "
                 "where malloc puts it)")
      ->check(CLI::Range(-1L, 4095L));
  app.add_flag("--shared-buffers", options.shared_buffers,
               "both implementations get buffers from multilane::SharedBuffer (like "
               "MPI_Alloc_mem), so ours copies once with memcpy instead of the kernel");
  app.add_option("--buffers", options.buffers,
                 "separate: each implementation has its own send and receive buffers, so neither "
                 "finds the cache lines where the other left them (the default); same: both take "
                 "turns on the same buffers (the floors always use Open MPI's)")
      ->check(CLI::IsMember({"separate", "same"}));
  app.add_flag("--kernel-copy-floor", options.kernel_copy_floor,
               "alltoall and allgather: also time the bare kernel copies every implementation "
               "that copies once through the kernel must make (the floor columns)");
  app.add_flag("--cache-line-floor", options.cache_line_floor,
               "blocks of at most 1016 bytes: also time the fewest cache lines that carry a block "
               "and a flag from sender to receiver, what every implementation must move (the "
               "floor columns)");
  app.add_option("--budget", options.budget, "seconds per collective and size");
  app.add_option("--min-repetitions", options.min_repetitions, "at least this many");
  app.add_option("--max-repetitions", options.max_repetitions, "at most this many");
  CLI11_PARSE(app, argc, argv);

  int rank = 0, ranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &ranks);
  MPI_Comm node;
  MPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int node_ranks = 0;
  MPI_Comm_size(node, &node_ranks);
  if (node_ranks != ranks) throw UsageError("shm_bench: every rank must run on one node");

  std::vector<Collective> collectives;
  for (const auto& name : CLI::detail::split(options.collectives, ',')) {
    const auto collective = parse_collective(name);
    if (!collective || is_reduction(*collective)) {
      throw UsageError("shm_bench: unknown collective '" + name +
                       "' (bcast, scatter, gather, allgather or alltoall)");
    }
    collectives.push_back(*collective);
  }
  const std::vector<std::uint64_t> sizes = parse_size_list(options.sizes);
  std::vector<std::byte> purge_block(options.purge_cache.empty() ? 0
                                                                 : parse_size(options.purge_cache));
  if (options.start == "auto") {
    options.start =
        ranks > runtime::shm::machine_topology().hardware_threads ? "barrier" : "together";
  }
  const Repetition repetition{purge_block, options.start == "together"};

  std::uint64_t job = 0;
  if (rank == 0) job = std::random_device{}() | static_cast<std::uint64_t>(getpid()) << 32;
  MPI_Bcast(&job, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD);
  ShmOptions shm;
  if (!options.buffer_size.empty()) shm.tuning.buffer_size = parse_size(options.buffer_size);
  shm.tuning.pipeline_buffers = options.pipeline_buffers;
  if (options.single_copy_from != "auto") {
    shm.single_copy =
        runtime::shm::SingleCopyLimits::from_size(parse_size(options.single_copy_from));
  }
  shm.learn_copy_path = options.learn_copy_path == "on";
  shm.learn_root_share = options.learn_root_share == "on";
  runtime::shm::TuningTable tuning;
  if (!options.tuning.empty()) {
    tuning = runtime::shm::read_tuning_file(options.tuning);
    shm.capacity = tuning.capacity_with(shm.tuning);
  }
  if (options.spin_us >= 0) {
    shm.spin = std::chrono::nanoseconds(static_cast<std::int64_t>(options.spin_us * 1000));
  }
  if (!options.yield_polling.empty()) shm.yield_while_polling = options.yield_polling == "on";
  ShmGroup group(job, 0, rank, ranks, shm);
  Floors floors;
  floors.kernel_copy = options.kernel_copy_floor;
  if (options.cache_line_floor) floors.cache_line.emplace();

  if (rank == 0) {
    fmt::print(
        "{} ranks on one node; pipeline buffers: {} x {}; single copy: {}{}; root's share: {}; "
        "buffers: {} ({}); tuning file: {}; cache purge: {}; start: {}\n\n",
        ranks, options.pipeline_buffers, format_size(shm.tuning.buffer_size),
        single_copy_text(group),
        shm.learn_copy_path && !shm.single_copy ? " (alltoall, allgather, bcast, scatter: learned)"
                                                : "",
        shm.learn_root_share ? "learned" : "default",
        options.shared_buffers ? "SharedBuffer" : "the application's", options.buffers,
        options.tuning.empty() ? std::string("none") : options.tuning,
        purge_block.empty() ? std::string("no") : format_size(purge_block.size()), options.start);
    fmt::print(
        "| collective | size | ours (us) | Open MPI (us) | MPI / ours | repetitions | ours "
        "copied once | root's share | floor (us) | floor |\n");
    fmt::print("|---|---|---|---|---|---|---|---|---|---|\n");
  }
  for (const Collective collective : collectives) {
    for (const std::uint64_t size : sizes) {
      const Row row =
          measure(group, tuning, collective, size, options, floors, repetition, rank, ranks);
      if (rank == 0) {
        fmt::print(
            "| {} | {} | {} | {} | {:.2f} | {} | {:.0f}% | {} | {} | {} |\n", to_string(collective),
            format_size(size), microseconds(row.ours), microseconds(row.mpi), row.mpi / row.ours,
            row.repetitions, 100 * row.copied_once,
            row.root_share ? fmt::format("{:.1f}%", 100 * *row.root_share) : std::string("-"),
            row.floor > 0 ? microseconds(row.floor) : std::string("-"),
            row.floor_kind.empty() ? std::string("-") : row.floor_kind);
        std::fflush(stdout);
      }
    }
  }
  return 0;
}

}  // namespace
}  // namespace multilane::shm_bench

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int status = 0;
  try {
    status = multilane::shm_bench::run(argc, argv);
  } catch (const std::exception& error) {
    fmt::print(stderr, "shm_bench: {}\n", error.what());
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  MPI_Finalize();
  return status;
}
