#include "multilane/collective.hpp"

namespace multilane {

std::uint64_t buffer_size(Collective collective, Buffer buffer, int rank, int num_ranks, int root,
                          std::uint64_t size) {
  const std::uint64_t all = size * static_cast<std::uint64_t>(num_ranks);
  const bool is_root = rank == root;
  if (buffer == Buffer::Scratch) return 0;
  const bool send = buffer == Buffer::Send;
  switch (collective) {
    case Collective::Bcast:
      return send ? 0 : size;
    case Collective::Scatter:
      return send ? (is_root ? all : 0) : size;
    case Collective::Gather:
      return send ? size : (is_root ? all : 0);
    case Collective::Allgather:
      return send ? size : all;
    case Collective::Alltoall:
      return all;
    case Collective::Reduce:
      return send ? size : (is_root ? size : 0);
    case Collective::Allreduce:
      return size;
    case Collective::ReduceScatter:
      return send ? all : size;
  }
  return 0;
}

Buffer input_buffer(Collective collective) {
  return collective == Collective::Bcast ? Buffer::Recv : Buffer::Send;
}

bool has_input(Collective collective, int rank, int root) {
  if (collective == Collective::Bcast || collective == Collective::Scatter) return rank == root;
  return true;
}

std::vector<ExpectedPiece> expected_result(Collective collective, int rank, int num_ranks, int root,
                                           std::uint64_t size) {
  std::vector<ExpectedPiece> out;
  if (size == 0) return out;
  const auto block = [&](int i) { return static_cast<std::uint64_t>(i) * size; };
  switch (collective) {
    case Collective::Bcast:
      out.push_back({0, size, root, 0});
      break;
    case Collective::Scatter:
      out.push_back({0, size, root, block(rank)});
      break;
    case Collective::Gather:
      if (rank == root) {
        for (int i = 0; i < num_ranks; ++i) out.push_back({block(i), size, i, 0});
      }
      break;
    case Collective::Allgather:
      for (int i = 0; i < num_ranks; ++i) out.push_back({block(i), size, i, 0});
      break;
    case Collective::Alltoall:
      for (int i = 0; i < num_ranks; ++i) out.push_back({block(i), size, i, block(rank)});
      break;
    case Collective::Reduce:
      if (rank == root) out.push_back({.offset = 0, .length = size, .reduced = true});
      break;
    case Collective::Allreduce:
      out.push_back({.offset = 0, .length = size, .reduced = true});
      break;
    case Collective::ReduceScatter:
      out.push_back({.offset = 0, .length = size, .origin_offset = block(rank), .reduced = true});
      break;
  }
  return out;
}

}  // namespace multilane
