#include "multilane/collective.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>

namespace multilane {

std::vector<std::uint64_t> block_offsets(std::span<const std::uint64_t> counts, int n,
                                         std::size_t first, std::size_t stride) {
  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(n) + 1, 0);
  for (int i = 0; i < n; ++i) offsets[i + 1] = offsets[i] + counts[first + i * stride];
  return offsets;
}

std::uint64_t largest_count(std::span<const std::uint64_t> counts) {
  return counts.empty() ? 0 : *std::max_element(counts.begin(), counts.end());
}

std::optional<std::string> counts_error(Collective collective, int num_ranks,
                                        std::span<const std::uint64_t> counts) {
  if (!is_uneven(collective)) {
    if (counts.empty()) return std::nullopt;
    return fmt::format("{} has one block size: per-rank counts are for its v-form",
                       to_string(collective));
  }
  const auto p = static_cast<std::size_t>(num_ranks);
  const std::size_t needed = collective == Collective::Alltoallv ? p * p : p;
  if (counts.size() == needed) return std::nullopt;
  return fmt::format("{} on {} ranks needs {} counts{}, not {}", to_string(collective), num_ranks,
                     needed, collective == Collective::Alltoallv ? " (one per pair of ranks)" : "",
                     counts.size());
}

namespace {

std::uint64_t sum(std::span<const std::uint64_t> counts) {
  return std::accumulate(counts.begin(), counts.end(), std::uint64_t{0});
}

std::uint64_t uneven_buffer_size(Collective collective, bool send, int rank, int num_ranks,
                                 int root, std::span<const std::uint64_t> counts) {
  const bool is_root = rank == root;
  const auto p = static_cast<std::size_t>(num_ranks);
  switch (collective) {
    case Collective::Gatherv:
      return send ? counts[rank] : (is_root ? sum(counts) : 0);
    case Collective::Scatterv:
      return send ? (is_root ? sum(counts) : 0) : counts[rank];
    case Collective::Allgatherv:
      return send ? counts[rank] : sum(counts);
    case Collective::Alltoallv:
      return send ? block_offsets(counts, num_ranks, rank * p, 1).back()
                  : block_offsets(counts, num_ranks, rank, p).back();
    case Collective::ReduceScatterv:
      return send ? sum(counts) : counts[rank];
    default:
      return 0;
  }
}

std::vector<ExpectedPiece> uneven_expected_result(Collective collective, int rank, int num_ranks,
                                                  int root, std::span<const std::uint64_t> counts) {
  std::vector<ExpectedPiece> out;
  const auto p = static_cast<std::size_t>(num_ranks);
  const auto add = [&out](ExpectedPiece piece) {
    if (piece.length > 0) out.push_back(piece);
  };
  switch (collective) {
    case Collective::Gatherv:
    case Collective::Allgatherv: {
      if (collective == Collective::Gatherv && rank != root) break;
      const auto offsets = block_offsets(counts, num_ranks);
      for (int i = 0; i < num_ranks; ++i) add({offsets[i], counts[i], i, 0});
      break;
    }
    case Collective::Scatterv:
      add({0, counts[rank], root, block_offsets(counts, rank).back()});
      break;
    case Collective::ReduceScatterv:
      if (counts[rank] > 0) {
        out.push_back({.offset = 0,
                       .length = counts[rank],
                       .origin_offset = block_offsets(counts, rank).back(),
                       .reduced = true,
                       .reduced_ranks = num_ranks});
      }
      break;
    case Collective::Alltoallv: {
      const auto column = block_offsets(counts, num_ranks, rank, p);
      for (int i = 0; i < num_ranks; ++i) {
        // From rank i: its block for `rank`, where i's row puts it.
        add({column[i], counts[i * p + rank], i, block_offsets(counts, rank, i * p, 1).back()});
      }
      break;
    }
    default:
      break;
  }
  return out;
}

}  // namespace

std::uint64_t buffer_size(Collective collective, Buffer buffer, int rank, int num_ranks, int root,
                          std::uint64_t size, std::span<const std::uint64_t> counts) {
  const std::uint64_t all = size * static_cast<std::uint64_t>(num_ranks);
  const bool is_root = rank == root;
  if (buffer == Buffer::Scratch) return 0;
  const bool send = buffer == Buffer::Send;
  if (is_uneven(collective)) {
    return uneven_buffer_size(collective, send, rank, num_ranks, root, counts);
  }
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
    case Collective::Scan:
      return size;
    case Collective::Exscan:
      return send || rank > 0 ? size : 0;
    default:
      return 0;
  }
}

Buffer input_buffer(Collective collective) {
  return collective == Collective::Bcast ? Buffer::Recv : Buffer::Send;
}

bool has_input(Collective collective, int rank, int root) {
  const Collective c = even_form(collective);
  if (c == Collective::Bcast || c == Collective::Scatter) return rank == root;
  return true;
}

std::vector<ExpectedPiece> expected_result(Collective collective, int rank, int num_ranks, int root,
                                           std::uint64_t size,
                                           std::span<const std::uint64_t> counts) {
  if (is_uneven(collective))
    return uneven_expected_result(collective, rank, num_ranks, root, counts);
  std::vector<ExpectedPiece> out;
  if (size == 0) return out;
  const auto block = [&](int i) { return static_cast<std::uint64_t>(i) * size; };
  const auto reduced = [&](std::uint64_t origin_offset, int ranks) {
    return ExpectedPiece{.offset = 0,
                         .length = size,
                         .origin_offset = origin_offset,
                         .reduced = true,
                         .reduced_ranks = ranks};
  };
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
      if (rank == root) out.push_back(reduced(0, num_ranks));
      break;
    case Collective::Allreduce:
      out.push_back(reduced(0, num_ranks));
      break;
    case Collective::ReduceScatter:
      out.push_back(reduced(block(rank), num_ranks));
      break;
    case Collective::Scan:
      out.push_back(reduced(0, rank + 1));
      break;
    case Collective::Exscan:
      if (rank > 0) out.push_back(reduced(0, rank));
      break;
    default:
      break;
  }
  return out;
}

}  // namespace multilane
