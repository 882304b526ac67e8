// tools/probe/flow_runner.cpp — listen, exchange ports, connect, send for a while, sum
// (flow_runner.hpp).
#include "probe/flow_runner.hpp"

#include <fmt/format.h>

#include <array>
#include <chrono>
#include <optional>
#include <vector>

#include "mpi/pmpi_check.hpp"
#include "multilane/errors.hpp"

namespace multilane::probe {

namespace {

constexpr int kMaxLanes = 16;
constexpr std::size_t kMessage = 1 << 20;
using Clock = std::chrono::steady_clock;

const std::string& lane_address(const Platform& platform, int rank, int lane) {
  const Node& node = platform.nodes[static_cast<std::size_t>(platform.node_of(rank))];
  return node.lanes[static_cast<std::size_t>(lane)].address;
}

channels::PathOptions path_options(int streams) {
  channels::PathOptions options;
  options.streams = streams;
  options.timeout = std::chrono::milliseconds(30'000);
  return options;
}

void send_for(channels::Channels& channels, const std::vector<channels::PathId>& paths,
              double seconds) {
  const std::vector<std::byte> message(kMessage, std::byte{0x5a});
  std::vector<channels::Outgoing> round;
  for (const channels::PathId path : paths) round.push_back({.path = path, .data = message});
  const auto end = Clock::now() + std::chrono::duration<double>(seconds);
  while (Clock::now() < end) channels.psend(round);
  for (channels::Outgoing& part : round) part.data = std::span(message).first(1);
  channels.psend(round);
}

// The rate from the end of the first round to the last: TCP's slow start and the first
// round's wait for the sender are left out, as iperf3 --omit does.
double receive_until_end(channels::Channels& channels, const std::vector<channels::PathId>& paths) {
  std::vector<std::vector<std::byte>> buffers(paths.size(), std::vector<std::byte>(kMessage));
  double bytes = 0;
  std::optional<Clock::time_point> first_round_done;
  while (true) {
    std::vector<channels::Incoming> round;
    for (std::size_t i = 0; i < paths.size(); ++i) {
      round.push_back({.path = paths[i], .buffer = buffers[i], .up_to = true, .received = 0});
    }
    channels.precv(round);
    bool ended = true;
    for (const channels::Incoming& part : round) {
      if (part.received == 1) continue;
      ended = false;
      if (first_round_done) bytes += static_cast<double>(part.received);
    }
    if (ended) {
      if (!first_round_done) return 0;
      return bytes / std::chrono::duration<double>(Clock::now() - *first_round_done).count();
    }
    if (!first_round_done) first_round_done = Clock::now();
  }
}

}  // namespace

double run_flows(MPI_Comm comm, const Platform& platform, const LinkTest& test,
                 const channels::Credentials& credentials, double seconds) {
  int rank = 0, size = 1;
  mpi::pmpi_check(PMPI_Comm_rank(comm, &rank), "MPI_Comm_rank");
  mpi::pmpi_check(PMPI_Comm_size(comm, &size), "MPI_Comm_size");
  const Flow* mine = nullptr;
  bool receiving = false;
  for (const Flow& f : test.flows) {
    if (f.lanes > kMaxLanes) throw UsageError(fmt::format("more than {} lanes", kMaxLanes));
    if (f.sender == rank || f.receiver == rank) mine = &f, receiving = f.receiver == rank;
  }
  channels::Channels channels(credentials);
  std::vector<channels::PathId> paths;
  std::array<int, kMaxLanes> ports{};
  if (mine != nullptr && receiving) {
    for (int lane = 0; lane < mine->lanes; ++lane) {
      paths.push_back(channels.add_path({.host = "",
                                         .port = 0,
                                         .relay = "",
                                         .bind_address = lane_address(platform, rank, lane),
                                         .options = path_options(mine->streams)}));
      ports[static_cast<std::size_t>(lane)] = channels.local_port(paths.back());
    }
  }
  std::vector<int> all_ports(static_cast<std::size_t>(size) * kMaxLanes);
  mpi::pmpi_check(
      PMPI_Allgather(ports.data(), kMaxLanes, MPI_INT, all_ports.data(), kMaxLanes, MPI_INT, comm),
      "MPI_Allgather (probe ports)");
  if (mine != nullptr && !receiving) {
    for (int lane = 0; lane < mine->lanes; ++lane) {
      const int port = all_ports[static_cast<std::size_t>(mine->receiver * kMaxLanes + lane)];
      paths.push_back(channels.add_path({.host = lane_address(platform, mine->receiver, lane),
                                         .port = static_cast<std::uint16_t>(port),
                                         .relay = "",
                                         .bind_address = "",
                                         .options = path_options(mine->streams)}));
    }
  }
  if (mine != nullptr) channels.establish();
  mpi::pmpi_check(PMPI_Barrier(comm), "MPI_Barrier (probe start)");
  double rate = 0;
  if (mine != nullptr && receiving) {
    rate = receive_until_end(channels, paths);
  } else if (mine != nullptr) {
    send_for(channels, paths, seconds);
  }
  double total = 0;
  mpi::pmpi_check(PMPI_Allreduce(&rate, &total, 1, MPI_DOUBLE, MPI_SUM, comm),
                  "MPI_Allreduce (probe rates)");
  return total;
}

}  // namespace multilane::probe
