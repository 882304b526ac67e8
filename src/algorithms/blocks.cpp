#include "blocks.hpp"

#include <algorithm>
#include <unordered_map>

namespace multilane::algo {

BlockStore send_buffer_store(std::uint64_t size) {
  return {Buffer::Send, [size](int rank) { return static_cast<std::uint64_t>(rank) * size; }};
}

BlockStore scratch_store(std::vector<int> ranks, std::uint64_t size) {
  std::unordered_map<int, std::uint64_t> offsets;
  for (std::size_t i = 0; i < ranks.size(); ++i) offsets.emplace(ranks[i], i * size);
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
Range run_range(const Run& run, std::span<const int> ranks, std::uint64_t size,
                const BlockStore& store) {
  return {store.buffer, store.offset_of(ranks[run.first]), run.count * size};
}
}  // namespace

std::vector<OpIndex> send_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 std::uint64_t size, const BlockStore& from,
                                 std::span<const OpIndex> deps, int lane) {
  std::vector<OpIndex> sent;
  for (const Run& run : block_runs(ranks)) {
    sent.push_back(b.send(peer, run_range(run, ranks, size, from), lane, deps));
  }
  return sent;
}

std::vector<OpIndex> recv_blocks(ScheduleBuilder& b, int peer, std::span<const int> ranks,
                                 std::uint64_t size, const BlockStore& into, int lane) {
  std::vector<OpIndex> received;
  for (const Run& run : block_runs(ranks)) {
    received.push_back(b.recv(peer, run_range(run, ranks, size, into), lane, {}));
  }
  return received;
}

HeldBlocks hold_at_root(ScheduleBuilder& b, int root, std::uint64_t size) {
  HeldBlocks held{send_buffer_store(size), {}};
  b.copy(Range{Buffer::Recv, 0, size}, Range{Buffer::Send, held.store.offset_of(root), size}, {});
  return held;
}

HeldBlocks receive_carried(ScheduleBuilder& b, int self, int from, std::vector<int> carried,
                           std::uint64_t size, int lane) {
  if (carried.size() == 1) {
    BlockStore recv{Buffer::Recv, [](int) { return std::uint64_t{0}; }};
    auto arrived = recv_blocks(b, from, carried, size, recv, lane);
    return {std::move(recv), std::move(arrived)};
  }
  b.need_scratch(carried.size() * size);
  const auto store = scratch_store(carried, size);
  auto arrived = recv_blocks(b, from, carried, size, store, lane);
  b.copy(Range{Buffer::Recv, 0, size}, Range{Buffer::Scratch, store.offset_of(self), size},
         arrived);
  return {store, std::move(arrived)};
}

OpIndex send_after(ScheduleBuilder& b, int peer, std::span<const int> ranks, std::uint64_t size,
                   const HeldBlocks& held, OpIndex previous, int lane) {
  std::vector<OpIndex> deps = held.arrived;
  deps.push_back(previous);
  for (OpIndex sent : send_blocks(b, peer, ranks, size, held.store, deps, lane)) {
    if (sent != kNoOp) previous = sent;
  }
  return previous;
}

void hand_out(ScheduleBuilder& b, int self, std::span<const int> members, std::uint64_t size,
              const HeldBlocks& held, OpIndex previous) {
  for (int u : members) {
    if (u != self) previous = send_after(b, u, std::span<const int>(&u, 1), size, held, previous);
  }
}

}  // namespace multilane::algo
