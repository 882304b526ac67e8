#include "runtime/shm/plan_builder.hpp"

#include "runtime/shm/layout.hpp"

#include <algorithm>
#include <stdexcept>
#include "support/ceil_div.hpp"

namespace multilane::runtime::shm {
namespace {

constexpr std::uint64_t kCacheLine = 64;

}  // namespace

std::uint64_t buffer_stride(const Geometry& geometry) {
  return round_up<std::uint64_t>(geometry.buffer_size, kCacheLine);
}

std::uint64_t data_bytes(const Geometry& geometry) {
  return buffer_stride(geometry) * geometry.buffers;
}

std::uint64_t shared_bytes(const CallShape& call) {
  const auto p = static_cast<std::uint64_t>(call.local_size);
  if (!call.collective || *call.collective == Collective::Bcast) return call.size;
  if (*call.collective == Collective::Alltoall) return p * p * call.size;
  return p * call.size;
}

bool fits_one_stage(const CallShape& call, const Geometry& geometry) {
  // Compared by division: p * p * size may overflow 64 bits.
  const auto p = static_cast<std::uint64_t>(call.local_size);
  const std::uint64_t b = geometry.buffer_size;
  if (!call.collective || *call.collective == Collective::Bcast) return call.size <= b;
  if (*call.collective == Collective::Alltoall) return call.size <= b / p / p;
  return call.size <= b / p;
}

std::uint64_t chunk_count(std::uint64_t total, std::uint64_t chunk) {
  return ceil_div(total, chunk);
}

Chunk chunk_at(std::uint64_t total, std::uint64_t chunk, std::uint64_t index) {
  const std::uint64_t offset = index * chunk;
  return {offset, std::min(chunk, total - offset)};
}

PlanBuilder::PlanBuilder(int local_rank, const Geometry& geometry, StageClock& clock, ShmPlan& plan)
    : rank_(local_rank), geometry_(geometry), clock_(clock), plan_(plan) {
  plan_.steps.clear();
  plan_.first_stage = clock_.next;
  plan_.stages = 0;
}

void PlanBuilder::enter_epoch() {
  // Lazily, at the call's first stage: a call without stages (0 bytes) changes nothing.
  if (clock_.geometry == geometry_) return;
  const StageClock previous = clock_;
  clock_.epoch_start = clock_.next;
  clock_.geometry = geometry_;
  ++clock_.epochs;
  wait_for_epoch(previous);
}

void PlanBuilder::wait_for_epoch(const StageClock& epoch) {
  const std::uint64_t used = epoch.next - epoch.epoch_start;
  const std::uint64_t buffers = epoch.geometry.buffers;
  for (std::uint64_t slot = 0; slot < std::min(used, buffers); ++slot) {
    Step step;
    step.primitive = Primitive::GroupSegPut;
    step.stage.previous = epoch.epoch_start + slot + (used - 1 - slot) / buffers * buffers;
    step.stage.index = step.stage.previous + buffers;
    step.stage.slot = static_cast<std::uint32_t>(slot);
    step.stage.reuses = true;
    step.slot_offset = slot * buffer_stride(epoch.geometry);
    plan_.steps.push_back(step);
  }
}

Stage PlanBuilder::stage(std::uint32_t writers, std::uint32_t readers) {
  enter_epoch();
  Stage stage;
  stage.index = clock_.next++;
  const std::uint64_t in_epoch = stage.index - clock_.epoch_start;
  stage.slot = static_cast<std::uint32_t>(in_epoch % geometry_.buffers);
  stage.reuses = in_epoch >= geometry_.buffers;
  stage.previous = stage.reuses ? stage.index - geometry_.buffers : 0;
  stage.writers = writers;
  stage.readers = readers;
  plan_.stages = clock_.next - plan_.first_stage;
  return stage;
}

bool PlanBuilder::merge_with_last(const Step& step) {
  if (plan_.steps.empty()) return false;
  Step& last = plan_.steps.back();
  // A zero-length put is a wait for an earlier epoch's buffer (wait_for_epoch), whose made-up
  // stage number may equal a stage of this call: never extend it.
  if (last.length == 0 || last.primitive != step.primitive ||
      last.stage.index != step.stage.index || last.stage.slot != step.stage.slot ||
      last.place != step.place || last.release ||
      last.slot_offset + last.length != step.slot_offset ||
      last.offset + last.length != step.offset) {
    return false;
  }
  last.length += step.length;
  last.release = step.release;
  return true;
}

void PlanBuilder::put(Primitive primitive, const Stage& stage, std::uint64_t slot_offset,
                      std::uint64_t offset, std::uint64_t length, int reader) {
  if (length == 0) return;
  if (slot_offset + length > geometry_.buffer_size) {
    throw std::logic_error("shm plan: put beyond its pipeline buffer");
  }
  Step step;
  step.primitive = primitive;
  step.peer = reader;
  step.stage = stage;
  place(step, slot_offset, length);
  step.offset = offset;
  step.length = length;
  if (!merge_with_last(step)) plan_.steps.push_back(step);
}

SharedPlace PlanBuilder::place_of(const Stage& stage) const {
  if (small_stage_bytes_ == 0) return SharedPlace::DataArea;
  if (small_stage_bytes_ <= kInlineBytes) return SharedPlace::SlotHeader;
  if (stage.writers == 1 && small_stage_bytes_ <= kFlaggedBytes) return SharedPlace::FlaggedLines;
  return SharedPlace::DataArea;
}

// The union of the puts into the stage that this rank has made: they are the steps just
// before its writer sync. (Not the zero-length puts that wait for an earlier epoch's buffers,
// whose made-up stage numbers may equal this one: wait_for_epoch.)
void PlanBuilder::cover_puts(Step& writer_sync) const {
  std::uint64_t begin = kFlaggedBytes;
  std::uint64_t end = 0;
  for (auto it = plan_.steps.rbegin(); it != plan_.steps.rend(); ++it) {
    if (!is_put(it->primitive) || it->stage.index != writer_sync.stage.index ||
        it->place != SharedPlace::FlaggedLines) {
      break;
    }
    begin = std::min(begin, it->slot_offset);
    end = std::max(end, it->slot_offset + it->length);
  }
  if (end > begin) {
    writer_sync.slot_offset = begin;
    writer_sync.length = end - begin;
  }
}

// Gets follow their stage's reader sync (the stage's other gets in between).
void PlanBuilder::cover_get(const Step& get) {
  for (auto it = plan_.steps.rbegin(); it != plan_.steps.rend(); ++it) {
    if (it->stage.index != get.stage.index) break;
    if (!is_sync(it->primitive)) continue;
    const std::uint64_t begin =
        it->length == 0 ? get.slot_offset : std::min(it->slot_offset, get.slot_offset);
    const std::uint64_t end = std::max(it->slot_offset + it->length, get.slot_offset + get.length);
    it->slot_offset = begin;
    it->length = end - begin;
    return;
  }
}

void PlanBuilder::sync(Primitive primitive, const Stage& stage, SyncRole role, int writer) {
  Step step;
  step.primitive = primitive;
  step.role = role;
  step.stage = stage;
  if (role == SyncRole::Reader) step.peer = writer;
  if (place_of(stage) == SharedPlace::FlaggedLines) {
    step.place = SharedPlace::FlaggedLines;  // covers bytes: its puts now, its gets later
    if (role == SyncRole::Writer) cover_puts(step);
  } else {
    step.slot_offset = stage.slot * buffer_stride(geometry_);  // touches no bytes
  }
  plan_.steps.push_back(step);
}

void PlanBuilder::get(Primitive primitive, const Stage& stage, std::uint64_t slot_offset,
                      std::uint64_t offset, std::uint64_t length, bool release) {
  if (length == 0 && !release) return;
  if (slot_offset + length > geometry_.buffer_size) {
    throw std::logic_error("shm plan: get beyond its pipeline buffer");
  }
  if (length == 0 && !plan_.steps.empty() && is_get(plan_.steps.back().primitive) &&
      plan_.steps.back().stage.index == stage.index) {
    plan_.steps.back().release = true;  // an empty last get: the previous get releases
    return;
  }
  Step step;
  step.primitive = primitive;
  step.release = release;
  step.stage = stage;
  place(step, slot_offset, length);
  step.offset = offset;
  step.length = length;
  if (step.place == SharedPlace::FlaggedLines) cover_get(step);
  if (!merge_with_last(step)) plan_.steps.push_back(step);
}

void PlanBuilder::place(Step& step, std::uint64_t slot_offset, std::uint64_t length) const {
  step.place = place_of(step.stage);
  switch (step.place) {
    case SharedPlace::DataArea:
      step.slot_offset = step.stage.slot * buffer_stride(geometry_) + slot_offset;
      return;
    case SharedPlace::SlotHeader:
    case SharedPlace::FlaggedLines:
      if (slot_offset + length > small_stage_bytes_) {
        throw std::logic_error("shm plan: put or get beyond its small stage's bytes");
      }
      step.slot_offset = slot_offset;
      return;
  }
}

void PlanBuilder::sender_put(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                             std::uint64_t length, int reader) {
  put(Primitive::SenderPut, stage, slot_offset, offset, length, reader);
}

void PlanBuilder::group_seg_put(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                                std::uint64_t length, int reader) {
  put(Primitive::GroupSegPut, stage, slot_offset, offset, length, reader);
}

void PlanBuilder::pair_sync(const Stage& stage, SyncRole role, int writer) {
  sync(Primitive::PairSync, stage, role, writer);
}

void PlanBuilder::group_sync(const Stage& stage, SyncRole role, int writer) {
  sync(Primitive::GroupSync, stage, role, writer);
}

void PlanBuilder::receiver_get(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                               std::uint64_t length, bool release) {
  get(Primitive::ReceiverGet, stage, slot_offset, offset, length, release);
}

void PlanBuilder::group_get(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                            std::uint64_t length, bool release) {
  get(Primitive::GroupGet, stage, slot_offset, offset, length, release);
}

void PlanBuilder::group_seg_get(const Stage& stage, std::uint64_t slot_offset, std::uint64_t offset,
                                std::uint64_t length, bool release) {
  get(Primitive::GroupSegGet, stage, slot_offset, offset, length, release);
}

void PlanBuilder::local_copy(std::uint64_t recv_offset, std::uint64_t send_offset,
                             std::uint64_t length) {
  if (length == 0) return;
  Step step;
  step.primitive = Primitive::LocalCopy;
  step.offset = recv_offset;
  step.source = send_offset;
  step.length = length;
  plan_.steps.push_back(step);
}

std::uint64_t PlanBuilder::exposed_entry(const Stage& stage, int rank) const {
  if ((static_cast<std::uint64_t>(rank) + 1) * kExposedBytes > geometry_.buffer_size) {
    throw std::logic_error("shm plan: exposed-buffer entry beyond its pipeline buffer");
  }
  return stage.slot * buffer_stride(geometry_) + static_cast<std::uint64_t>(rank) * kExposedBytes;
}

void PlanBuilder::expose(const Stage& stage, bool recv_buffer) {
  Step step;
  step.primitive = Primitive::Expose;
  step.stage = stage;
  step.slot_offset = exposed_entry(stage, rank_);
  step.exposes_recv = recv_buffer;
  plan_.steps.push_back(step);
}

void PlanBuilder::direct(Primitive primitive, const Stage& stage, int peer, std::uint64_t offset,
                         std::uint64_t remote, std::uint64_t length, bool release) {
  Step step;
  step.primitive = primitive;
  step.release = release;
  step.peer = peer;
  step.stage = stage;
  step.slot_offset = exposed_entry(stage, peer);
  step.offset = offset;
  step.remote = remote;
  step.length = length;
  plan_.steps.push_back(step);
}

void PlanBuilder::direct_get(const Stage& stage, int peer, std::uint64_t remote,
                             std::uint64_t offset, std::uint64_t length, bool release) {
  direct(Primitive::DirectGet, stage, peer, offset, remote, length, release);
}

void PlanBuilder::direct_put(const Stage& stage, int peer, std::uint64_t offset,
                             std::uint64_t remote, std::uint64_t length, bool release) {
  direct(Primitive::DirectPut, stage, peer, offset, remote, length, release);
}

void PlanBuilder::wait_released(const Stage& stage) {
  // A put of nothing into the buffer's next use: it waits for exactly this.
  Step step;
  step.primitive = Primitive::GroupSegPut;
  step.stage.previous = stage.index;
  step.stage.index = stage.index + geometry_.buffers;
  step.stage.slot = stage.slot;
  step.stage.reuses = true;
  step.slot_offset = stage.slot * buffer_stride(geometry_);
  plan_.steps.push_back(step);
}

void build_plan(const CallShape& call, int local_rank, const Geometry& geometry, StageClock& clock,
                ShmPlan& plan) {
  PlanBuilder builder(local_rank, geometry, clock, plan);
  if (!call.collective) return plan_barrier(builder, call);
  if (call.single_copy) return plan_single_copy(builder, call);
  if (shared_bytes(call) <= kFlaggedBytes) builder.use_small_stages(shared_bytes(call));
  switch (*call.collective) {
    case Collective::Bcast:
      return plan_bcast(builder, call);
    case Collective::Scatter:
      return plan_scatter(builder, call);
    case Collective::Gather:
      return plan_gather(builder, call);
    case Collective::Allgather:
      return plan_allgather(builder, call);
    case Collective::Alltoall:
      return plan_alltoall(builder, call);
    case Collective::Reduce:
    case Collective::Allreduce:
    case Collective::ReduceScatter:
    case Collective::Scan:
    case Collective::Exscan:
    case Collective::Gatherv:
    case Collective::Scatterv:
    case Collective::Allgatherv:
    case Collective::Alltoallv:
    case Collective::ReduceScatterv:
      break;  // no group call combines or has uneven blocks (ShmGroup::run refuses them)
  }
}

}  // namespace multilane::runtime::shm
