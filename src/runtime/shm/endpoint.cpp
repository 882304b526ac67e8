#include "runtime/shm/endpoint.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <exception>
#include <utility>

#include "runtime/shm/copy_bytes.hpp"
#include "runtime/shm/cross_memory.hpp"
#include "runtime/shm/process_alive.hpp"
#include "runtime/shm/shared_regions.hpp"
#include "runtime/shm/shm_error.hpp"

namespace multilane::runtime::shm {
namespace {

using Clock = std::chrono::steady_clock;

// The low 16 bits of a `filled` tag count the writers that arrived (kMaxLocalSize < 2^16).
constexpr std::uint64_t kArrivalMask = 0xffff;
static_assert(kMaxLocalSize <= kArrivalMask);

// The bytes of shared memory a step touches, from its slot_offset.
std::uint64_t shared_extent(const Step& step) {
  if (step.primitive == Primitive::Expose || is_direct(step.primitive)) return kExposedBytes;
  if (is_put(step.primitive) || is_get(step.primitive)) return step.length;
  if (is_sync(step.primitive) && step.place == SharedPlace::FlaggedLines) return step.length;
  return 0;
}

// How many bytes a place holds, and its name in errors.
struct PlaceBytes {
  std::uint64_t room = 0;
  std::string_view name;
};
PlaceBytes bytes_in(SharedPlace place, std::uint64_t capacity) {
  switch (place) {
    case SharedPlace::SlotHeader:
      return {kInlineBytes, "slot header's bytes"};
    case SharedPlace::FlaggedLines:
      return {kFlaggedBytes, "flagged lines' bytes"};
    case SharedPlace::DataArea:
      break;
  }
  return {capacity, "data area"};
}

pid_t pid_of(RankRecord& rank) {
  return std::atomic_ref<std::int32_t>(rank.pid).load(std::memory_order_acquire);
}

bool has_left(RankRecord& rank) {
  return std::atomic_ref<std::uint32_t>(rank.left).load(std::memory_order_acquire) != 0;
}

std::string seconds(std::chrono::milliseconds duration) {
  return fmt::format("{:g} s", static_cast<double>(duration.count()) / 1000.0);
}

}  // namespace

ShmEndpoint::ShmEndpoint(SegmentView view, int local_rank, const WaitPolicy& policy,
                         std::string label)
    : view_(view), rank_(local_rank), policy_(policy), pid_(getpid()), label_(std::move(label)) {}

void ShmEndpoint::enter_call(const CallInfo& call) {
  RankRecord& record = view_.ranks[static_cast<std::size_t>(rank_)];
  // Calls in a loop differ only in their serials; the serial alone is then quicker to store
  // (and copying the whole call, just written by the caller, would stall on its stores).
  if (same_but_serial(call, call_)) {
    call_.serial = call.serial;
    store_serial(record, call.serial);
  } else {
    call_ = call;
    digest_ = digest_but_serial(call);
    store_record(record, pack(call));
  }
  fingerprint_ = fingerprint(call.serial, digest_);
}

std::string ShmEndpoint::describe_wait(const Step& step) const {
  if (waits_for_free_buffer(step)) {
    return fmt::format("the readers of stage {} to release pipeline buffer {} in {}",
                       step.stage.previous, step.stage.slot, describe(call_));
  }
  const std::string who =
      step.peer >= 0 ? fmt::format("local rank {}", step.peer) : std::string("the writers");
  return fmt::format("{} to fill pipeline buffer {} (stage {}) in {}", who, step.stage.slot,
                     step.stage.index, describe(call_));
}

std::string ShmEndpoint::laggards() const {
  std::string text;
  for (int r = 0; r < local_size(); ++r) {
    if (r == rank_) continue;
    const auto record = load_record(view_.ranks[static_cast<std::size_t>(r)]);
    const CallInfo where = record ? unpack(*record) : CallInfo{};  // serial 0: no call yet
    if (has_left(view_.ranks[static_cast<std::size_t>(r)])) {
      text += fmt::format("; local rank {} has left the group after {}", r, describe(where));
    } else if (where.serial < call_.serial) {
      text += fmt::format("; local rank {} is in {}", r, describe(where));
    }
  }
  return text;
}

void ShmEndpoint::wait(const Step& step) {
  check_not_broken();
  // Flags first; a writer that takes longer than the spin is waited for on `filled`, which it
  // publishes after its stamps.
  if (waits_for_flags(step) && poll_until([&] { return startable(step); }, policy_)) return;
  wait_on_word(step);
}

void ShmEndpoint::wait_on_word(const Step& step) {
  const auto check = [&] {
    check_not_broken();
    if (const auto dead = dead_rank()) fail_dead(dead->rank, dead->pid, describe_wait(step));
  };
  if (wait_until_reached(word_waited_on(step), target_of(step), policy_, check)) return;
  check_not_broken();
  check_ranks_alive(describe_wait(step), true);
  fail(ErrorKind::timeout, fmt::format("timed out after {} waiting for {}{}",
                                       seconds(policy_.timeout), describe_wait(step), laggards()));
}

std::uint64_t ShmEndpoint::contribution() const {
  return fingerprint_ << 16 | 1;
}

void ShmEndpoint::writer_arrives(const Step& step) {
  SyncWord& filled = view_.slots[step.stage.slot].filled;
  const std::atomic_ref<std::uint64_t> tag(filled.tag);
  const std::uint32_t writers = step.stage.writers;
  if (writers == 1) {
    tag.store(contribution(), std::memory_order_relaxed);  // 0 before: a lone writer may store
  } else {
    const std::uint64_t before = tag.fetch_add(contribution(), std::memory_order_acq_rel);
    if ((before & kArrivalMask) + 1 < writers) return;
  }
  publish(filled, stage_value(step.stage.index));  // releases the tag and the buffer's bytes
}

void ShmEndpoint::check_writers_call(const Step& step) {
  const std::uint64_t sum =
      std::atomic_ref<std::uint64_t>(view_.slots[step.stage.slot].filled.tag)
          .load(std::memory_order_relaxed);  // ordered by the acquire of `filled`
  if (sum == step.stage.writers * contribution()) return;
  // Name where the writers are now (they may have moved on since they wrote).
  std::string others;
  for (int r = 0; r < local_size(); ++r) {
    if (r == rank_ || (step.peer >= 0 && r != step.peer)) continue;
    const auto record = load_record(view_.ranks[static_cast<std::size_t>(r)]);
    if (record && record->serial == call_.serial && fingerprint(unpack(*record)) == fingerprint_) {
      continue;
    }
    others += fmt::format("; local rank {} is in {}", r,
                          record ? describe(unpack(*record)) : std::string("another call"));
  }
  if (others.empty()) others = "; a writer of the stage was in another call";
  fail(ErrorKind::mismatch, fmt::format("collective calls differ at stage {}: this rank is in {}{}",
                                        step.stage.index, describe(call_), others));
}

std::byte* ShmEndpoint::shared_bytes_of(const Step& step) const {
  return step.place == SharedPlace::SlotHeader
             ? view_.slots[step.stage.slot].inline_data + step.slot_offset
             : view_.data + step.slot_offset;
}

void ShmEndpoint::check_flagged_call(const Step& step) {
  const std::uint64_t expected = line_flag(target_of(step), fingerprint_);
  if (lines_carry(lines_of(step), step.slot_offset, step.length, expected)) return;
  if (!has_reached(word_waited_on(step), target_of(step))) {
    check_not_broken();
    wait_on_word(step);
  }
  check_writers_call(step);
}

void ShmEndpoint::perform(const Step& step, const ShmBuffers& buffers) {
  if (const std::uint64_t extent = shared_extent(step); extent > 0) {
    if (const PlaceBytes place = bytes_in(step.place, view_.capacity);
        step.slot_offset + extent > place.room) {
      fail(ErrorKind::mismatch,
           fmt::format("{} of {} bytes at {} exceeds the {} of {} bytes", to_string(step.primitive),
                       extent, step.slot_offset, place.name, place.room));
    }
  }
  const bool in_lines = step.place == SharedPlace::FlaggedLines;
  switch (step.primitive) {
    case Primitive::SenderPut:
    case Primitive::GroupSegPut:
      if (in_lines) {
        copy_into_lines(lines_of(step), step.slot_offset, buffers.send + step.offset, step.length);
      } else {
        copy_bytes(shared_bytes_of(step), buffers.send + step.offset, step.length);
      }
      return;
    case Primitive::PairSync:
    case Primitive::GroupSync: {
      if (timing_copies_) copies_started_ = std::chrono::steady_clock::now();
      if (step.role == SyncRole::Reader) {
        return waits_for_flags(step) ? check_flagged_call(step) : check_writers_call(step);
      }
      if (in_lines) {
        stamp_lines(lines_of(step), step.slot_offset, step.length,
                    line_flag(stage_value(step.stage.index), fingerprint_));
      }
      return writer_arrives(step);
    }
    case Primitive::ReceiverGet:
    case Primitive::GroupGet:
    case Primitive::GroupSegGet:
      if (in_lines) {
        copy_out_of_lines(buffers.recv + step.offset, lines_of(step), step.slot_offset,
                          step.length);
      } else {
        copy_bytes(buffers.recv + step.offset, shared_bytes_of(step), step.length);
      }
      if (step.release) release(step);
      return;
    case Primitive::LocalCopy:
      copy_bytes(buffers.recv + step.offset, buffers.send + step.source, step.length);
      return;
    case Primitive::Expose: {
      const std::byte* exposed = step.exposes_recv ? buffers.recv : buffers.send;
      ExposedBuffer entry{.address = reinterpret_cast<std::uintptr_t>(exposed), .pid = pid_};
      if (const auto region = find_region(exposed)) {
        entry.region_fd = region->fd;
        entry.region_inode = region->inode;
        entry.region_offset = region->offset;
      }
      std::memcpy(shared_bytes_of(step), &entry, sizeof entry);
      return;
    }
    case Primitive::DirectGet:
    case Primitive::DirectPut:
      return copy_direct(step, buffers, shared_bytes_of(step));
  }
}

void ShmEndpoint::copy_direct(const Step& step, const ShmBuffers& buffers,
                              const std::byte* entry_bytes) {
  ExposedBuffer entry;
  std::memcpy(&entry, entry_bytes, sizeof entry);
  const bool get = step.primitive == Primitive::DirectGet;
  if (step.length == 0) {
    // The root copies this rank's whole block (root_share.hpp): nothing but the release.
  } else if (std::byte* mapped = peer_regions_.find(entry, step.remote, step.length)) {
    if (get) {
      copy_bytes(buffers.recv + step.offset, mapped, step.length);
    } else {
      copy_bytes(mapped, buffers.send + step.offset, step.length);
    }
    ++direct_copies_.mapped;
  } else {
    const std::uint64_t remote = entry.address + step.remote;
    const CrossMemoryResult copied =
        get ? read_process_memory(entry.pid, remote, buffers.recv + step.offset, step.length)
            : write_process_memory(entry.pid, remote, buffers.send + step.offset, step.length);
    if (!copied.ok()) {
      // A dead peer is the better explanation, also when /proc does not show it dead yet.
      check_ranks_alive("a single copy", true);
      if (copied.process_gone) fail_dead(step.peer, entry.pid, "a single copy");
      fail(ErrorKind::resource, fmt::format("single copy with local rank {} in {}: {}", step.peer,
                                            describe(call_), copied.error));
    }
    ++direct_copies_.kernel;
  }
  if (step.release) {
    if (timing_copies_) stamp_copy_time();
    release(step);
  }
}

void ShmEndpoint::stamp_copy_time() {
  const auto took = std::chrono::steady_clock::now() - copies_started_;
  std::atomic_ref<std::uint64_t>(view_.ranks[static_cast<std::size_t>(rank_)].copy_time)
      .store(
          pack_call_time(call_.serial, std::chrono::duration_cast<std::chrono::nanoseconds>(took)),
          std::memory_order_relaxed);  // released with the stage
}

void ShmEndpoint::release(const Step& step) {
  SlotHeader& slot = view_.slots[step.stage.slot];
  if (!count_arrival(slot.drained, step.stage.readers)) return;
  // Every reader has checked the fingerprints; the next writers start from 0 once they see
  // the buffer released.
  std::atomic_ref<std::uint64_t>(slot.filled.tag).store(0, std::memory_order_relaxed);
  publish(slot.drained, stage_value(step.stage.index));
}

void ShmEndpoint::break_group(const Failure& reason) {
  interrupt(reason);
  broken_ = true;
}

void ShmEndpoint::interrupt(const Failure& reason) {
  SyncWord& broken = view_.header->broken;
  std::uint32_t unclaimed = 0;
  if (std::atomic_ref<std::uint32_t>(broken.arrivals).compare_exchange_strong(unclaimed, 1)) {
    const std::size_t length = std::min(reason.text.size(), kReasonBytes - 1);
    std::memcpy(view_.header->reason, reason.text.data(), length);
    view_.header->reason[length] = '\0';
    view_.header->reason_kind = static_cast<std::uint8_t>(reason.kind);
    publish(broken, static_cast<std::uint32_t>(rank_ + 1));
  }
  wake_everyone(view_.header->attached);
  for (SlotHeader& slot : view_.slots) {
    wake_everyone(slot.filled);
    wake_everyone(slot.drained);
  }
}

void ShmEndpoint::fail(ErrorKind kind, const std::string& reason) {
  break_group({kind, reason});
  throw ShmError(kind, label_ + ": " + reason);
}

void ShmEndpoint::check_not_broken() {
  const std::uint32_t broken = load_value(view_.header->broken);
  if (broken == 0) {
    if (broken_) {
      throw ShmError(ErrorKind::internal,
                     label_ + ": this rank failed earlier; the group is unusable");
    }
    return;
  }
  broken_ = true;
  const int by = static_cast<int>(broken) - 1;
  const std::string reason(view_.header->reason, strnlen(view_.header->reason, kReasonBytes));
  const std::uint8_t kind = view_.header->reason_kind;
  const ErrorKind reason_kind = kind <= static_cast<std::uint8_t>(ErrorKind::internal)
                                    ? static_cast<ErrorKind>(kind)
                                    : ErrorKind::internal;
  if (by == rank_) throw ShmError(reason_kind, label_ + ": this rank failed earlier: " + reason);
  throw ShmError(reason_kind, fmt::format("{}: local rank {} failed: {}", label_, by, reason));
}

void ShmEndpoint::leave() {
  if (std::uncaught_exceptions() > 0 && !broken_) {
    break_group({ErrorKind::internal,
                 fmt::format("local rank {} left the group while an exception was propagating "
                             "(in {})",
                             rank_, describe(call_))});
    return;
  }
  std::atomic_ref<std::uint32_t>(view_.ranks[static_cast<std::size_t>(rank_)].left)
      .store(1, std::memory_order_release);
}

void ShmEndpoint::fail_dead(int rank, pid_t pid, const std::string& waiting_for) {
  check_not_broken();  // a rank that failed, said why, and exited is not news
  fail(ErrorKind::peer_gone,
       fmt::format("local rank {} (pid {}) died while this rank waited for {}", rank, pid,
                   waiting_for));
}

void ShmEndpoint::check_ranks_alive(const std::string& waiting_for, bool now) {
  if (const auto dead = dead_rank(now)) fail_dead(dead->rank, dead->pid, waiting_for);
}

std::optional<ShmEndpoint::DeadRank> ShmEndpoint::dead_rank(bool now) {
  const auto time = Clock::now();
  if (!now && time < next_liveness_check_) return std::nullopt;
  next_liveness_check_ = time + policy_.check_interval;
  for (int r = 0; r < local_size(); ++r) {
    if (r == rank_) continue;
    RankRecord& record = view_.ranks[static_cast<std::size_t>(r)];
    const pid_t pid = pid_of(record);
    if (pid != 0 && !has_left(record) && !process_alive(pid)) return DeadRank{r, pid};
  }
  return std::nullopt;
}

}  // namespace multilane::runtime::shm
