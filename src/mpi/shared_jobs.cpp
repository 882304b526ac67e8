// mpi/shared_jobs.cpp — see shared_jobs.hpp.
#include "mpi/shared_jobs.hpp"

#include <algorithm>
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
// The communicators with a multilane job here, by their group: the job's group, and the live
// ones (the oldest first).
struct KnownGroup {
  std::vector<int> job_group;
  std::vector<std::weak_ptr<Communicator>> members;
};
std::map<std::vector<int>, KnownGroup> jobs_by_group;

// A live communicator of `known` (the oldest still alive), or null; forgets the dead ones.
std::shared_ptr<Communicator> alive(KnownGroup& known) {
  std::erase_if(known.members, [](const std::weak_ptr<Communicator>& m) { return m.expired(); });
  for (const auto& member : known.members) {
    if (auto live = member.lock()) return live;
  }
  return nullptr;
}

// A way into a job that holds every rank of a group: a communicator of it, its group and the
// job's group.
struct FoundJob {
  std::shared_ptr<Communicator> member;
  std::vector<int> member_group;
  std::vector<int> job_group;
};

bool holds(const std::vector<int>& job_group, const std::vector<int>& group) {
  std::vector<int> a = job_group, b = group;
  std::sort(a.begin(), a.end());
  std::sort(b.begin(), b.end());
  return std::includes(a.begin(), a.end(), b.begin(), b.end());
}

// The job of `group` itself, else that of the smallest group that holds it (the first such in
// order among equals): the same on every rank that has the same jobs.
std::optional<FoundJob> job_holding(const std::vector<int>& group) {
  std::lock_guard lock(jobs_mutex);
  std::optional<FoundJob> found;
  for (auto it = jobs_by_group.begin(); it != jobs_by_group.end();) {
    std::shared_ptr<Communicator> member = alive(it->second);
    if (!member) {
      it = jobs_by_group.erase(it);
      continue;
    }
    if (it->first == group) return FoundJob{member, it->first, it->second.job_group};
    if (holds(it->first, group) && (!found || it->first.size() < found->member_group.size())) {
      found = FoundJob{member, it->first, it->second.job_group};
    }
    ++it;
  }
  return found;
}

// `group`'s ranks as ranks of the job of `found`, placed on `platform`, this rank `rank`.
runtime::JobMembership membership(const FoundJob& found, const std::vector<int>& group, int rank,
                                  const Platform& platform) {
  runtime::JobMembership m{.job_ranks = {}, .rank = rank, .platform = platform};
  for (int world : group) {
    const auto at = std::find(found.job_group.begin(), found.job_group.end(), world);
    m.job_ranks.push_back(static_cast<int>(at - found.job_group.begin()));
  }
  return m;
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

std::optional<SharedSeat> share_job(MPI_Comm comm, const std::vector<int>& group,
                                    const Platform& platform) {
  int rank = 0;
  pmpi_check(PMPI_Comm_rank(comm, &rank), "PMPI_Comm_rank");
  const bool concurrent_calls = thread_level() == MPI_THREAD_MULTIPLE;
  std::random_device random;
  for (int attempt = 0; attempt < kShareAttempts; ++attempt) {
    const std::optional<FoundJob> found = job_holding(group);
    Offer mine;
    if (found)
      mine = {JobSharing::job_id(*found->member), JobSharing::free_spaces(*found->member), 0};
    if (rank == 0) mine.start = random();
    std::vector<Offer> offers(group.size());
    pmpi_check(PMPI_Allgather(&mine, sizeof(Offer), MPI_BYTE, offers.data(), sizeof(Offer),
                              MPI_BYTE, comm),
               "PMPI_Allgather (shared jobs)");
    const std::optional<std::uint32_t> space = common_space(offers, offers.front().start);
    if (!space) return std::nullopt;  // the same verdict on every rank
    // A job of the member's group shares it as the member does; any other, as some of its
    // ranks (every rank makes the same choice: the job ids agree).
    const bool as_member = found->member_group == group;
    const runtime::JobMembership members =
        as_member ? runtime::JobMembership{} : membership(*found, group, rank, platform);
    std::optional<Communicator> seat =
        JobSharing::share(*found->member, *space, concurrent_calls, as_member ? nullptr : &members);
    // Whether a rank did not get it, and the highest numbering of the space's calls.
    const runtime::CallNumbering mine_numbering =
        seat ? JobSharing::numbering(*seat) : runtime::CallNumbering{};
    std::array<std::uint64_t, 3> local{seat ? 0u : 1u, mine_numbering.sequence,
                                       mine_numbering.generation},
        highest{};
    pmpi_check(PMPI_Allreduce(local.data(), highest.data(), 3, MPI_UINT64_T, MPI_MAX, comm),
               "PMPI_Allreduce (shared jobs)");
    if (highest[0] == 0) {
      JobSharing::continue_numbering(
          *seat, {.sequence = highest[1], .generation = static_cast<std::uint32_t>(highest[2])});
      auto shared = std::make_shared<Communicator>(std::move(*seat));
      remember_job(group, found->job_group, shared);
      return SharedSeat{
          .communicator = std::move(shared), .space = *space, .job_group = found->job_group};
    }
  }
  return std::nullopt;
}

void remember_job(const std::vector<int>& group, const std::vector<int>& job_group,
                  const std::shared_ptr<Communicator>& communicator) {
  std::lock_guard lock(jobs_mutex);
  KnownGroup& known = jobs_by_group[group];
  known.job_group = job_group;
  std::erase_if(known.members, [](const std::weak_ptr<Communicator>& m) { return m.expired(); });
  known.members.push_back(communicator);
}

}  // namespace multilane::mpi
