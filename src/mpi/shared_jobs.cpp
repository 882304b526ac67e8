// mpi/shared_jobs.cpp — see shared_jobs.hpp.
#include "mpi/shared_jobs.hpp"

#include <array>
#include <bit>
#include <map>
#include <mutex>
#include <random>

#include "mpi/pmpi_check.hpp"
#include "runtime/api/job_sharing.hpp"
#include "runtime/transport/call_space.hpp"

namespace multilane::mpi {

namespace {

using runtime::JobSharing;
using runtime::kCallSpaces;

std::mutex jobs_mutex;
std::map<std::vector<int>, std::vector<std::weak_ptr<Communicator>>> jobs_by_group;

// A live communicator of a job of `group` here (the oldest still alive), or null.
std::shared_ptr<Communicator> job_of(const std::vector<int>& group) {
  std::lock_guard lock(jobs_mutex);
  auto found = jobs_by_group.find(group);
  if (found == jobs_by_group.end()) return nullptr;
  std::vector<std::weak_ptr<Communicator>>& members = found->second;
  std::erase_if(members, [](const std::weak_ptr<Communicator>& m) { return m.expired(); });
  for (const auto& member : members) {
    if (auto alive = member.lock()) return alive;
  }
  jobs_by_group.erase(found);
  return nullptr;
}

// What a rank offers in step 1 (shared_jobs.hpp).
struct Offer {
  std::uint64_t job_id = 0;       // 0: no job for the group here
  std::uint64_t free_spaces = 0;  // one bit per space
  std::uint64_t start = 0;        // rank 0's: where to start looking
};

// The space every rank can take, looking from `start` on: the same on every rank.
std::optional<std::uint32_t> common_space(const std::vector<Offer>& offers, std::uint64_t start) {
  std::uint64_t free = ~std::uint64_t{0};
  for (const Offer& offer : offers) {
    if (offer.job_id == 0 || offer.job_id != offers.front().job_id) return std::nullopt;
    free &= offer.free_spaces;
  }
  if (free == 0) return std::nullopt;
  const int from = static_cast<int>(start % kCallSpaces);
  const std::uint64_t rotated = std::rotr(free, from);  // bit i: space (from + i) mod 64
  return static_cast<std::uint32_t>((from + std::countr_zero(rotated)) % kCallSpaces);
}

int thread_level() {
  int provided = MPI_THREAD_SINGLE;
  pmpi_check(PMPI_Query_thread(&provided), "PMPI_Query_thread");
  return provided;
}

}  // namespace

std::vector<int> world_ranks(MPI_Comm comm) {
  MPI_Group group = MPI_GROUP_NULL, world = MPI_GROUP_NULL;
  pmpi_check(PMPI_Comm_group(comm, &group), "PMPI_Comm_group");
  pmpi_check(PMPI_Comm_group(MPI_COMM_WORLD, &world), "PMPI_Comm_group");
  int size = 0;
  pmpi_check(PMPI_Group_size(group, &size), "PMPI_Group_size");
  std::vector<int> ranks(static_cast<std::size_t>(size)), in_world(ranks.size());
  for (int r = 0; r < size; ++r) ranks[static_cast<std::size_t>(r)] = r;
  pmpi_check(PMPI_Group_translate_ranks(group, size, ranks.data(), world, in_world.data()),
             "PMPI_Group_translate_ranks");
  PMPI_Group_free(&group);
  PMPI_Group_free(&world);
  return in_world;
}

std::optional<SharedSeat> share_job(MPI_Comm comm, const std::vector<int>& group) {
  int rank = 0;
  pmpi_check(PMPI_Comm_rank(comm, &rank), "PMPI_Comm_rank");
  const bool concurrent_calls = thread_level() == MPI_THREAD_MULTIPLE;
  std::random_device random;
  for (int attempt = 0; attempt < kShareAttempts; ++attempt) {
    const std::shared_ptr<Communicator> member = job_of(group);
    Offer mine;
    if (member) mine = {JobSharing::job_id(*member), JobSharing::free_spaces(*member), 0};
    if (rank == 0) mine.start = random();
    std::vector<Offer> offers(group.size());
    pmpi_check(PMPI_Allgather(&mine, sizeof(Offer), MPI_BYTE, offers.data(), sizeof(Offer),
                              MPI_BYTE, comm),
               "PMPI_Allgather (shared jobs)");
    const std::optional<std::uint32_t> space = common_space(offers, offers.front().start);
    if (!space) return std::nullopt;  // the same verdict on every rank
    std::optional<Communicator> seat = JobSharing::share(*member, *space, concurrent_calls);
    int taken = seat ? 1 : 0, all_taken = 0;
    pmpi_check(PMPI_Allreduce(&taken, &all_taken, 1, MPI_INT, MPI_MIN, comm),
               "PMPI_Allreduce (shared jobs)");
    if (all_taken) {
      auto shared = std::make_shared<Communicator>(std::move(*seat));
      remember_job(group, shared);
      return SharedSeat{.communicator = std::move(shared), .space = *space};
    }
  }
  return std::nullopt;
}

void remember_job(const std::vector<int>& group,
                  const std::shared_ptr<Communicator>& communicator) {
  std::lock_guard lock(jobs_mutex);
  std::vector<std::weak_ptr<Communicator>>& members = jobs_by_group[group];
  std::erase_if(members, [](const std::weak_ptr<Communicator>& m) { return m.expired(); });
  members.push_back(communicator);
}

}  // namespace multilane::mpi
