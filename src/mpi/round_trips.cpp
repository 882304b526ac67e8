// mpi/round_trips.cpp — waves of concurrent ping-pongs between leaders (round_trips.hpp).
#include "mpi/round_trips.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <limits>
#include <vector>

#include "mpi/pmpi_check.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

constexpr int kPingTag = 1;
constexpr int kEchoTag = 2;
constexpr int kWaveWidth = 8;
constexpr int kRepetitions = 3;

// One repetition of one wave: ping `targets`, echo `sources`; the fastest round trip to each
// target goes into `row`.
void ping_wave(MPI_Comm comm, const std::vector<int>& targets, const std::vector<int>& sources,
               std::vector<double>& row) {
  const std::size_t t = targets.size();
  std::vector<MPI_Request> receives(t + sources.size(), MPI_REQUEST_NULL);
  std::vector<MPI_Request> sends;
  std::vector<char> echo_in(t), ping_in(sources.size()), out(1, 0);
  for (std::size_t i = 0; i < t; ++i) {
    pmpi_check(PMPI_Irecv(&echo_in[i], 1, MPI_CHAR, targets[i], kEchoTag, comm, &receives[i]),
               "PMPI_Irecv (round trips)");
  }
  for (std::size_t i = 0; i < sources.size(); ++i) {
    pmpi_check(PMPI_Irecv(&ping_in[i], 1, MPI_CHAR, sources[i], kPingTag, comm, &receives[t + i]),
               "PMPI_Irecv (round trips)");
  }
  std::vector<double> sent_at(t);
  for (std::size_t i = 0; i < t; ++i) {
    sent_at[i] = PMPI_Wtime();
    pmpi_check(PMPI_Isend(out.data(), 1, MPI_CHAR, targets[i], kPingTag, comm, &sends.emplace_back()),
               "PMPI_Isend (round trips)");
  }
  const double deadline = PMPI_Wtime() + kRoundTripTimeout;
  for (std::size_t done = 0; done < receives.size();) {
    int index = MPI_UNDEFINED, flag = 0;
    pmpi_check(PMPI_Testany(static_cast<int>(receives.size()), receives.data(), &index, &flag,
                            MPI_STATUS_IGNORE),
               "PMPI_Testany (round trips)");
    if (flag == 0 || index == MPI_UNDEFINED) {
      if (PMPI_Wtime() > deadline) {
        std::string silent;
        for (std::size_t i = 0; i < receives.size(); ++i) {
          if (receives[i] == MPI_REQUEST_NULL) continue;
          silent += fmt::format("{}{}", silent.empty() ? "" : ", ", i < t ? targets[i] : sources[i - t]);
        }
        throw CommunicationError(fmt::format(
            "measuring round trips between nodes: no answer within {} s from node(s) {}",
            kRoundTripTimeout, silent));
      }
      continue;
    }
    ++done;
    const auto i = static_cast<std::size_t>(index);
    if (i < t) {
      double& best = row[static_cast<std::size_t>(targets[i])];
      best = std::min(best, PMPI_Wtime() - sent_at[i]);
    } else {
      pmpi_check(PMPI_Isend(out.data(), 1, MPI_CHAR, sources[i - t], kEchoTag, comm,
                            &sends.emplace_back()),
                 "PMPI_Isend (round trips)");
    }
  }
  // Every send has been received by now (each ping was answered, each echo answers a ping that
  // arrived), so this completes at once.
  pmpi_check(PMPI_Waitall(static_cast<int>(sends.size()), sends.data(), MPI_STATUSES_IGNORE),
             "PMPI_Waitall (round trips)");
}

}  // namespace

RoundTrips measure_round_trips(MPI_Comm leaders) {
  int me = 0, n = 1;
  pmpi_check(PMPI_Comm_rank(leaders, &me), "PMPI_Comm_rank");
  pmpi_check(PMPI_Comm_size(leaders, &n), "PMPI_Comm_size");
  const double unmeasured = std::numeric_limits<double>::infinity();
  std::vector<double> row(static_cast<std::size_t>(n), unmeasured);
  for (int first = 1; first <= n / 2; first += kWaveWidth) {
    std::vector<int> targets, sources;
    for (int offset = first; offset < first + kWaveWidth && offset <= n / 2; ++offset) {
      targets.push_back((me + offset) % n);
      sources.push_back((me - offset + n) % n);
    }
    for (int repetition = 0; repetition < kRepetitions; ++repetition) {
      ping_wave(leaders, targets, sources, row);
    }
  }
  RoundTrips trips{.nodes = n, .seconds = std::vector<double>(static_cast<std::size_t>(n) * n)};
  pmpi_check(PMPI_Allgather(row.data(), n, MPI_DOUBLE, trips.seconds.data(), n, MPI_DOUBLE, leaders),
             "PMPI_Allgather (round trips)");
  // Each pair was measured from one side or both: the fastest counts, for both directions.
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      const std::size_t ab = static_cast<std::size_t>(a) * n + b;
      const std::size_t ba = static_cast<std::size_t>(b) * n + a;
      trips.seconds[ab] = trips.seconds[ba] = std::min(trips.seconds[ab], trips.seconds[ba]);
    }
    trips.seconds[static_cast<std::size_t>(a) * n + a] = 0;
  }
  return trips;
}

}  // namespace multilane::mpi
