#include "blocks.hpp"

#include <algorithm>
#include <unordered_map>

namespace multilane::algo {

std::uint64_t BlockSizes::of(std::span<const int> ranks) const {
  std::uint64_t bytes = 0;
  for (int u : ranks) bytes += of(u);
  return bytes;
}

BlockStore send_buffer_store(const BlockSizes& sizes, int p) {
  std::vector<std::uint64_t> offsets(static_cast<std::size_t>(p), 0);
  for (int u = 1; u < p; ++u) offsets[u] = offsets[u - 1] + sizes.of(u - 1);
  return {Buffer::Send, [offsets = std::move(offsets)](int rank) { return offsets[rank]; }};
}

BlockStore scratch_store(std::vector<int> ranks, const BlockSizes& sizes) {
  std::unordered_map<int, std::uint64_t> offsets;
  std::uint64_t next = 0;
  for (int u : ranks) {
    offsets.emplace(u, next);
    next += sizes.of(u);
  }
  return {Buffer::Scratch, [offsets = std::move(offsets)](int rank) { return offsets.at(rank); }};
}

std::vector<Run> block_runs(std::span<const int> ranks) {
  std::vector<Run> runs;
  for (std::size_t i = 0; i < ranks.size(); ++i) {
    if (!runs.empty() && ranks[i] == ranks[i - 1] + 1) {
      ++runs.back().count;
    } else {
      runs.push_back({i, 1});
    }
  }
  return runs;
}

namespace {
Range run_range(const Run& run, std::span<const int> ranks, const BlockSizes& sizes,
                const BlockStore& store) {
  return {store.buffer, store.offset_of(ranks[run.first]),
          sizes.of(ranks.subspan(run.first, run.count))};
}
}  // namespace

std::vector<OpIndex> send_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 const BlockSizes& sizes, const BlockStore& from,
                                 std::span<const OpIndex> deps, int lane) {
  std::vector<OpIndex> sent;
  for (const Run& run : block_runs(ranks)) {
    sent.push_back(b.send(peer, run_range(run, ranks, sizes, from), lane, deps));
  }
  return sent;
}

std::vector<OpIndex> recv_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 const BlockSizes& sizes, const BlockStore& into, int lane) {
  std::vector<OpIndex> received;
  for (const Run& run : block_runs(ranks)) {
    received.push_back(b.recv(peer, run_range(run, ranks, sizes, into), lane, {}));
  }
  return received;
}

HeldBlocks hold_at_root(ScheduleBuilder& b, int root, int p, const BlockSizes& sizes) {
  HeldBlocks held{send_buffer_store(sizes, p), {}};
  b.copy(Range{Buffer::Recv, 0, sizes.of(root)},
         Range{Buffer::Send, held.store.offset_of(root), sizes.of(root)}, {});
  return held;
}

HeldBlocks receive_carried(ScheduleBuilder& b, int self, int from, std::vector<int> carried,
                           const BlockSizes& sizes, int lane) {
  if (carried.size() == 1) {
    BlockStore recv{Buffer::Recv, [](int) { return std::uint64_t{0}; }};
    auto arrived = recv_blocks(b, from, carried, sizes, recv, lane);
    return {std::move(recv), std::move(arrived)};
  }
  b.need_scratch(sizes.of(carried));
  const auto store = scratch_store(carried, sizes);
  auto arrived = recv_blocks(b, from, carried, sizes, store, lane);
  b.copy(Range{Buffer::Recv, 0, sizes.of(self)},
         Range{Buffer::Scratch, store.offset_of(self), sizes.of(self)}, arrived);
  return {store, std::move(arrived)};
}

OpIndex send_after(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                   const BlockSizes& sizes, const HeldBlocks& held, OpIndex previous, int lane) {
  std::vector<OpIndex> deps = held.arrived;
  deps.push_back(previous);
  for (OpIndex sent : send_blocks(b, peer, ranks, sizes, held.store, deps, lane)) {
    if (sent != kNoOp) previous = sent;
  }
  return previous;
}

void hand_out(ScheduleBuilder& b, int self, std::span<const int> members, const BlockSizes& sizes,
              const HeldBlocks& held, OpIndex previous) {
  for (int u : members) {
    if (u != self) previous = send_after(b, u, std::span<const int>(&u, 1), sizes, held, previous);
  }
}

}  // namespace multilane::algo
