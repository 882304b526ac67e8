// mpi/comm_bootstrap.cpp — layout and job set-up over PMPI (comm_bootstrap.hpp).
#include "mpi/comm_bootstrap.hpp"

#include <fmt/format.h>
#include <sodium.h>

#include <array>
#include <climits>
#include <cstring>
#include <map>

#include "mpi/discovered_platform.hpp"
#include "mpi/host_identity.hpp"
#include "mpi/listen_address.hpp"
#include "mpi/platform_match.hpp"
#include "mpi/pmpi_check.hpp"
#include "runtime/exchange_join.hpp"

namespace multilane::mpi {

namespace {
std::vector<std::string> all_gather_text(MPI_Comm comm, int size, const std::string& mine);
}  // namespace

CommLayout gather_layout(MPI_Comm comm, const std::optional<Platform>& file,
                         const std::string& path) {
  CommLayout layout;
  pmpi_check(PMPI_Comm_rank(comm, &layout.rank), "PMPI_Comm_rank");
  pmpi_check(PMPI_Comm_size(comm, &layout.size), "PMPI_Comm_size");
  if (file) {
    layout.platform = place_by_name(*file, path, all_gather_text(comm, layout.size, node_name()));
  } else {
    const std::uint64_t mine = this_host().hash;
    std::vector<std::uint64_t> hashes(static_cast<std::size_t>(layout.size));
    pmpi_check(PMPI_Allgather(&mine, 1, MPI_UINT64_T, hashes.data(), 1, MPI_UINT64_T, comm),
               "PMPI_Allgather (host hashes)");
    layout.platform = discovered_platform(hashes, all_gather_text(comm, layout.size, site_name()));
  }
  std::map<int, int> nodes, sites;
  for (int rank = 0; rank < layout.size; ++rank) {
    nodes.emplace(layout.platform.node_of(rank), 0);
    sites.emplace(layout.platform.site_of(rank), 0);
  }
  layout.nodes = static_cast<int>(nodes.size());
  layout.sites = static_cast<int>(sites.size());
  return layout;
}

namespace {

std::vector<std::string> all_gather_text(MPI_Comm comm, int size, const std::string& mine) {
  if (mine.size() > INT_MAX / 2) throw CommunicationError("address text too long");
  const int length = static_cast<int>(mine.size());
  std::vector<int> lengths(static_cast<std::size_t>(size));
  pmpi_check(PMPI_Allgather(&length, 1, MPI_INT, lengths.data(), 1, MPI_INT, comm),
             "PMPI_Allgather (address lengths)");
  std::vector<int> offsets(lengths.size());
  long long total = 0;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    if (total + lengths[r] > INT_MAX) throw CommunicationError("addresses too long to gather");
    offsets[r] = static_cast<int>(total);
    total += lengths[r];
  }
  std::string all(static_cast<std::size_t>(total), '\0');
  pmpi_check(PMPI_Allgatherv(mine.data(), length, MPI_CHAR, all.data(), lengths.data(),
                             offsets.data(), MPI_CHAR, comm),
             "PMPI_Allgatherv (addresses)");
  std::vector<std::string> out;
  for (std::size_t r = 0; r < lengths.size(); ++r) {
    out.push_back(
        all.substr(static_cast<std::size_t>(offsets[r]), static_cast<std::size_t>(lengths[r])));
  }
  return out;
}

}  // namespace

Communicator join(MPI_Comm comm, const CommLayout& layout) {
  // Secret and job id from rank 0: a fresh job per communicator, so no two communicators (nor
  // two programs on one host) accept each other's connections or share memory segments.
  std::array<unsigned char, runtime::kJobSecretBytes + sizeof(std::uint64_t)> fresh{};
  if (layout.rank == 0) {
    if (sodium_init() < 0) throw CommunicationError("libsodium failed to initialise");
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
    return all_gather_text(comm, size, mine);
  };
  return runtime::join_by_exchange(std::move(job));
}

}  // namespace multilane::mpi
