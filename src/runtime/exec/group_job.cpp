// runtime/exec/group_job.cpp — see group_job.hpp.
#include "runtime/exec/group_job.hpp"

#include <algorithm>

namespace multilane::runtime {

namespace {

// Bytes per block of a group call (the whole message for bcast), as the tuning is keyed.
std::uint64_t group_block_size(Collective collective, std::span<const std::byte> source,
                               std::span<const std::byte> recv, const shm::ShmGroup& group) {
  switch (collective) {
    case Collective::Bcast:
    case Collective::Scatter:
      return recv.size();
    case Collective::Alltoall:
      return source.size() / static_cast<std::size_t>(group.local_size());
    default:
      return source.size();
  }
}

}  // namespace

std::vector<int> node_members(const Platform& platform, int rank) {
  std::vector<int> members;
  for (int r = 0; r < platform.num_ranks(); ++r) {
    if (platform.node_of(r) == platform.node_of(rank)) members.push_back(r);
  }
  return members;
}

void run_group_op(const Op& op, int rank, std::span<const int> members, CallMemory& memory,
                  const shm::TuningTable& tuning, shm::ShmGroup& group) {
  const Collective collective = group_collective(op.kind);
  const int root =
      static_cast<int>(std::find(members.begin(), members.end(), op.peer) - members.begin());
  const std::span<std::byte> source = memory.bytes(op.source);
  const std::span<std::byte> range = memory.bytes(op.range);
  // A group bcast works in one buffer: the root's message, or where the others want it.
  const std::span<std::byte> recv =
      collective == Collective::Bcast && op.peer == rank ? source : range;
  group.run(collective, source, recv, root,
            tuning.find(collective, group_block_size(collective, source, recv, group)));
}

shm::GroupRunner::Job make_group_job(const Op& op, int rank, const std::vector<int>& members,
                                     CallMemory& memory, const shm::TuningTable& tuning) {
  return [&op, rank, &members, &memory, &tuning](shm::ShmGroup& group) {
    run_group_op(op, rank, members, memory, tuning, group);
  };
}

}  // namespace multilane::runtime
