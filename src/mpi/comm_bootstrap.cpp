// mpi/comm_bootstrap.cpp — layout and job set-up over PMPI (comm_bootstrap.hpp).
#include "mpi/comm_bootstrap.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <array>
#include <cstring>

#include "mpi/all_gather_text.hpp"
#include "mpi/discovery.hpp"
#include "mpi/listen_address.hpp"
#include "mpi/platform_match.hpp"
#include "mpi/pmpi_check.hpp"
#include "mpi/route_policy.hpp"
#include "runtime/api/exchange_join.hpp"

namespace multilane::mpi {

CommLayout gather_layout(MPI_Comm comm, const std::optional<Platform>& file,
                         const std::string& path) {
  CommLayout layout;
  pmpi_check(PMPI_Comm_rank(comm, &layout.rank), "PMPI_Comm_rank");
  pmpi_check(PMPI_Comm_size(comm, &layout.size), "PMPI_Comm_size");
  if (file) {
    std::vector<RankHost> hosts;
    for (const std::string& text :
         all_gather_text(comm, layout.size, rank_host_text(this_rank_host()), "host names")) {
      hosts.push_back(parse_rank_host(text));
    }
    layout.platform = place_on_file(*file, path, hosts);
  } else {
    layout.platform = discovered_platform(discover(comm, layout.rank, layout.size));
  }
  const RankSpread spread = spread_of(layout.platform);
  layout.nodes = spread.nodes;
  layout.sites = spread.sites;
  return layout;
}

Communicator join(MPI_Comm comm, const CommLayout& layout) {
  // Secret and job id from rank 0: a fresh job per communicator, so no two communicators (nor
  // two programs on one host) accept each other's connections or share memory segments.
  std::array<unsigned char, runtime::kJobSecretBytes + sizeof(std::uint64_t)> fresh{};
  if (layout.rank == 0) {
    if (sodium_init() < 0) {
      throw CommunicationError(ErrorKind::resource, "libsodium failed to initialise");
    }
    randombytes_buf(fresh.data(), fresh.size());
  }
  pmpi_check(PMPI_Bcast(fresh.data(), static_cast<int>(fresh.size()), MPI_BYTE, 0, comm),
             "PMPI_Bcast (job secret)");
  runtime::ExchangeJob job;
  job.rank = layout.rank;
  job.size = layout.size;
  std::memcpy(job.secret.key.data(), fresh.data(), runtime::kJobSecretBytes);
  std::memcpy(&job.job_id, fresh.data() + runtime::kJobSecretBytes, sizeof(job.job_id));
  job.platform = layout.platform;
  job.host = listen_address(layout.nodes > 1);
  job.all_gather = [comm, size = layout.size](const std::string& mine) {
    return all_gather_text(comm, size, mine, "addresses");
  };
  // While a blocking call waits, the MPI library's own requests move on: a peer may need one of
  // this rank's (a large MPI_Isend it receives) before it reaches the collective.
  CommunicatorOptions options;
  options.while_waiting = [] {
    int flag = 0;
    PMPI_Iprobe(MPI_ANY_SOURCE, MPI_ANY_TAG, MPI_COMM_WORLD, &flag, MPI_STATUS_IGNORE);
  };
  return runtime::join_by_exchange(std::move(job), std::move(options));
}

}  // namespace multilane::mpi
