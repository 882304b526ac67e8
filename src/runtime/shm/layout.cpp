#include "runtime/shm/layout.hpp"
#include "support/ceil_div.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr std::size_t kPage = 4096;

struct Offsets {
  std::size_t ranks, roots, slots, lines, data, total;
};

Offsets offsets(int local_size, std::size_t capacity) {
  Offsets at{};
  at.ranks = round_up(sizeof(SegmentHeader), alignof(RankRecord));
  const auto p = static_cast<std::size_t>(local_size);
  at.roots = round_up(at.ranks + sizeof(RankRecord) * p, alignof(RootRecord));
  at.slots = round_up(at.roots + sizeof(RootRecord) * p, alignof(SlotHeader));
  at.lines = round_up(at.slots + sizeof(SlotHeader) * kMaxPipelineBuffers, alignof(FlaggedLine));
  at.data =
      round_up(at.lines + sizeof(FlaggedLine) * kFlaggedLinesPerSlot * kMaxPipelineBuffers, kPage);
  at.total = round_up(at.data + capacity, kPage);
  return at;
}

}  // namespace

std::size_t segment_bytes(int local_size, std::size_t capacity) {
  return offsets(local_size, capacity).total;
}

SegmentView view_segment(std::byte* base, int local_size, std::size_t capacity) {
  const Offsets at = offsets(local_size, capacity);
  SegmentView view;
  view.header = reinterpret_cast<SegmentHeader*>(base);
  view.ranks = {reinterpret_cast<RankRecord*>(base + at.ranks),
                static_cast<std::size_t>(local_size)};
  view.roots = {reinterpret_cast<RootRecord*>(base + at.roots),
                static_cast<std::size_t>(local_size)};
  view.slots = {reinterpret_cast<SlotHeader*>(base + at.slots),
                static_cast<std::size_t>(kMaxPipelineBuffers)};
  view.lines = {reinterpret_cast<FlaggedLine*>(base + at.lines),
                kFlaggedLinesPerSlot * kMaxPipelineBuffers};
  view.data = base + at.data;
  view.capacity = capacity;
  return view;
}

}  // namespace multilane::runtime::shm
