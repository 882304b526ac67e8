// tools/collective_benchmark.cpp — see collective_benchmark.hpp.
#include "collective_benchmark.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstring>

#include "multilane/collective.hpp"
#include "runtime/check/data_check.hpp"

namespace multilane::runtime {

double median(std::vector<double> values) {
  if (values.empty()) return 0;
  std::sort(values.begin(), values.end());
  const std::size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

namespace {

using Seconds = std::chrono::duration<double>;

int default_iterations(std::uint64_t size) {
  const std::uint64_t budget = 32ull << 20;  // bytes per repetition, roughly
  return static_cast<int>(
      std::clamp<std::uint64_t>(budget / std::max<std::uint64_t>(size, 1), 1, 20));
}

// The maximum over ranks of each rank's value, at rank 0.
std::vector<double> max_over_ranks(Communicator& comm, const std::vector<double>& mine) {
  std::vector<double> all(comm.rank() == 0 ? mine.size() * comm.size() : 0);
  comm.gather(std::as_bytes(std::span(mine)), std::as_writable_bytes(std::span(all)), 0,
              {"linear", 0, 0});
  std::vector<double> result(mine.size(), 0);
  for (std::size_t r = 0; r < all.size() / std::max<std::size_t>(mine.size(), 1); ++r) {
    for (std::size_t i = 0; i < mine.size(); ++i) {
      result[i] = std::max(result[i], all[r * mine.size() + i]);
    }
  }
  return result;
}

// Whether every rank's flag is set.
bool all_ranks(Communicator& comm, bool mine) {
  const std::byte flag{static_cast<unsigned char>(mine ? 1 : 0)};
  std::vector<std::byte> flags(comm.size());
  comm.allgather({&flag, 1}, flags, {"recursive-doubling", 0, 0});
  return std::all_of(flags.begin(), flags.end(), [](std::byte b) { return b == std::byte{1}; });
}

// The timed part of both measurements: per repetition a barrier, then `call` back to back;
// fills the point's iterations, times (max over ranks) and median (rank 0).
template <typename Call>
void time_calls(Communicator& comm, const BenchSettings& settings, const Call& call,
                BenchPoint& point) {
  if (settings.iterations > 0)
    point.iterations = settings.iterations;
  else
    point.iterations = default_iterations(point.size);
  std::vector<double> mine;
  for (int r = 0; r < settings.repetitions; ++r) {
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < point.iterations; ++i) call();
    mine.push_back(Seconds(std::chrono::steady_clock::now() - start).count() / point.iterations);
  }
  point.times_s = max_over_ranks(comm, mine);
  if (comm.rank() == 0) point.median_s = median(point.times_s);
}

}  // namespace

BenchPoint measure_collective(Communicator& comm, Collective collective, std::uint64_t size,
                              const BenchSettings& settings) {
  const int p = comm.size();
  const int rank = comm.rank();
  const auto element = static_cast<std::uint32_t>(
      is_reduction(collective) ? element_size(settings.reduction.type) : 1);
  const std::vector<std::uint64_t> counts = settings.counts.counts(collective, p, size, element);
  if (!counts.empty()) size = largest_count(counts);
  BenchPoint point;
  point.size = size;
  point.algorithm =
      comm.resolve_algorithm(collective, size, settings.root, settings.options, element, counts);
  CollectiveOptions options = settings.options;
  options.algorithm = point.algorithm;
  const auto bytes = [&](Buffer buffer) {
    return buffer_size(collective, buffer, rank, p, settings.root, size, counts);
  };
  const BenchBuffer send_buffer(bytes(Buffer::Send), settings.memory);
  const BenchBuffer recv_buffer(bytes(Buffer::Recv), settings.memory);
  const std::span<std::byte> send = send_buffer.bytes();
  const std::span<std::byte> recv = recv_buffer.bytes();
  auto call = [&] {
    if (is_uneven(collective)) {
      comm.runv(collective, send, recv, settings.root, counts, options, settings.reduction);
    } else {
      comm.run(collective, send, recv, settings.root, size, options, settings.reduction);
    }
  };

  if (settings.check) {
    fill_for_check(collective, rank, p, settings.root, size, send, recv, settings.reduction,
                   counts);
    call();
    const std::string error =
        check_result(collective, rank, p, settings.root, size, recv, settings.reduction, counts);
    if (!error.empty()) {
      fmt::print(stderr, "check failed: {} {} of {} bytes: {}\n", to_string(collective),
                 point.algorithm, size, error);
    }
    point.checked = true;
    point.check_ok = all_ranks(comm, error.empty());
  } else {
    call();  // warm-up
  }

  time_calls(comm, settings, call, point);
  return point;
}

BenchPoint measure_pingpong(Communicator& comm, std::uint64_t size, const BenchSettings& settings) {
  const int rank = comm.rank();
  const int peer = 1 - rank;  // ranks 0 and 1 only
  BenchPoint point;
  point.algorithm = "pingpong";
  point.size = size;
  std::vector<std::byte> send(rank < 2 ? size : 0);
  std::vector<std::byte> recv(rank < 2 ? size : 0);
  for (std::uint64_t i = 0; i < send.size(); ++i) send[i] = pattern_byte(rank, i);
  auto round_trip = [&] {
    if (rank == 0) {
      comm.send(send, peer);
      comm.recv(recv, peer);
    } else if (rank == 1) {
      comm.recv(recv, peer);
      comm.send(send, peer);
    }
  };
  round_trip();  // warm-up: opens the connections
  bool ok = true;
  for (std::uint64_t i = 0; i < recv.size() && ok; ++i) ok = recv[i] == pattern_byte(peer, i);
  if (!ok) fmt::print(stderr, "check failed: pingpong of {} bytes: rank {}\n", size, rank);
  point.checked = settings.check;
  point.check_ok = !settings.check || all_ranks(comm, ok);
  time_calls(comm, settings, round_trip, point);
  return point;
}

P2pPoint measure_p2p(Communicator& comm, std::uint64_t size, int repetitions, bool check) {
  P2pPoint point;
  point.size = size;
  std::vector<std::byte> data(comm.rank() < 2 ? size : 0);
  std::byte ack{1};
  if (comm.rank() == 0 && check) {
    for (std::uint64_t i = 0; i < size; ++i) data[i] = pattern_byte(0, i);
  }
  // The receiver posts its receive before the barrier, as a receiver that is always reading
  // (iperf3's server) would: the data is read straight into place, not kept as early chunks.
  auto post = [&] { return comm.rank() == 1 ? comm.irecv(data, 0) : Request{}; };
  auto transfer = [&](Request& posted) {
    if (comm.rank() == 0) {
      comm.send(data, 1);
      comm.recv({&ack, 1}, 1);
    } else if (comm.rank() == 1) {
      posted.wait();
      comm.send({&ack, 1}, 0);
    }
  };
  Request warm_up = post();
  transfer(warm_up);  // opens the connections
  bool ok = true;
  if (check && comm.rank() == 1) {
    for (std::uint64_t i = 0; i < size && ok; ++i) ok = data[i] == pattern_byte(0, i);
    if (!ok) fmt::print(stderr, "check failed: point-to-point data of {} bytes differs\n", size);
  }
  point.check_ok = all_ranks(comm, ok);
  for (int r = 0; r < repetitions; ++r) {
    Request posted = post();
    comm.barrier();
    const auto start = std::chrono::steady_clock::now();
    transfer(posted);
    point.times_s.push_back(Seconds(std::chrono::steady_clock::now() - start).count());
  }
  point.median_s = median(point.times_s);
  return point;
}

}  // namespace multilane::runtime
