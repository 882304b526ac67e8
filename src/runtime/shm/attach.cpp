#include "runtime/shm/attach.hpp"

#include <fmt/format.h>
#include <unistd.h>

#include <atomic>
#include <new>
#include <optional>
#include <thread>
#include <vector>

#include "runtime/shm/cross_memory.hpp"
#include "runtime/shm/endpoint.hpp"
#include "runtime/shm/layout.hpp"
#include "runtime/shm/process_alive.hpp"
#include "runtime/shm/shm_error.hpp"

namespace multilane::runtime::shm {
namespace {

using Clock = std::chrono::steady_clock;

constexpr auto kLookAgain = std::chrono::milliseconds(1);

std::string seconds(std::chrono::milliseconds duration) {
  return fmt::format("{:g} s", static_cast<double>(duration.count()) / 1000.0);
}

SegmentName name_for(const GroupIdentity& group, pid_t creator) {
  return {group.job_id, group.node_id, group.instance, creator};
}

SegmentView view_of(const ShmSegment& segment, const GroupIdentity& group) {
  return view_segment(segment.data(), group.local_size, group.capacity);
}

ShmSegment create(const GroupIdentity& group) {
  ShmSegment segment = ShmSegment::create(name_for(group, getpid()),
                                          segment_bytes(group.local_size, group.capacity));
  SegmentView view = view_of(segment, group);
  SegmentHeader& header = *new (view.header) SegmentHeader{};
  header.version = kLayoutVersion;
  header.local_size = static_cast<std::uint32_t>(group.local_size);
  header.job_id = group.job_id;
  header.node_id = group.node_id;
  header.instance = group.instance;
  header.capacity = group.capacity;
  view.ranks[0].pid = getpid();
  header.creator_header_address = reinterpret_cast<std::uintptr_t>(view.header);
  allow_cross_memory_access();
  header.attached.arrivals = 1;  // the creator; `value` becomes 1 once every rank attached
  std::atomic_ref<std::uint64_t>(header.magic).store(kSegmentMagic, std::memory_order_release);
  return segment;
}

// The segment of the group if its creator has published it; nullopt to look again later.
// Removes segments of the group whose creator is dead (a previous, crashed run).
std::optional<ShmSegment> find(const GroupIdentity& group) {
  std::vector<SegmentName> live;
  for (const SegmentName& name : list_segments(group.job_id, group.node_id)) {
    if (name.instance != group.instance) continue;
    if (process_alive(name.creator)) {
      live.push_back(name);
    } else {
      remove_segment(name);  // its creator is dead: a crashed run's leftover
    }
  }
  if (live.size() > 1) {
    throw ShmError(ErrorKind::resource,
                   fmt::format("{}: two live segments claim this group: {} and {} (job id reused?)",
                               group_label(group), live[0].text(), live[1].text()));
  }
  if (live.empty()) return std::nullopt;
  auto segment = ShmSegment::open(live[0], segment_bytes(group.local_size, group.capacity));
  if (!segment) return std::nullopt;
  SegmentHeader& header = *view_of(*segment, group).header;
  if (std::atomic_ref<std::uint64_t>(header.magic).load(std::memory_order_acquire) !=
      kSegmentMagic) {
    return std::nullopt;
  }
  if (header.version != kLayoutVersion ||
      header.local_size != static_cast<std::uint32_t>(group.local_size) ||
      header.capacity != group.capacity) {
    throw ShmError(
        ErrorKind::mismatch,
        fmt::format(
            "{}: segment {} was made for {} local ranks and a data area of {} bytes (layout {}); "
            "this rank expects {} ranks and {} bytes (layout {}): the ranks' options differ",
            group_label(group), live[0].text(), header.local_size, header.capacity, header.version,
            group.local_size, group.capacity, kLayoutVersion));
  }
  return segment;
}

ShmSegment join(const GroupIdentity& group, const WaitPolicy& policy) {
  const auto deadline = Clock::now() + policy.timeout;
  while (true) {
    if (auto segment = find(group)) return std::move(*segment);
    if (Clock::now() >= deadline) {
      throw ShmError(
          ErrorKind::timeout,
          fmt::format("{}: timed out after {} waiting for local rank 0 to create the segment "
                      "/multilane-{:016x}-"
                      "{}-{}-<pid>",
                      group_label(group), seconds(policy.timeout), group.job_id, group.node_id,
                      group.instance));
    }
    std::this_thread::sleep_for(kLookAgain);
  }
}

// Whether this process may read the creator's memory (single copy; cross_memory.hpp), counted
// in the header before this rank attaches, so every rank knows the answer once all attached.
void check_single_copy(const SegmentView& view) {
  allow_cross_memory_access();
  SegmentHeader& header = *view.header;
  std::uint64_t magic = 0;
  const CrossMemoryResult read = read_process_memory(
      std::atomic_ref<std::int32_t>(view.ranks[0].pid).load(), header.creator_header_address,
      reinterpret_cast<std::byte*>(&magic), sizeof magic);
  if (read.ok() && magic == kSegmentMagic) return;
  std::atomic_ref<std::uint32_t>(header.single_copy_refusals).fetch_add(1);
}

void register_pid(ShmEndpoint& endpoint, RankRecord& record) {
  std::int32_t none = 0;
  if (!std::atomic_ref<std::int32_t>(record.pid).compare_exchange_strong(none, getpid())) {
    endpoint.fail(ErrorKind::mismatch, fmt::format("local rank {} is attached already (pid {})",
                                                   endpoint.local_rank(), none));
  }
}

std::string missing_ranks(const SegmentView& view) {
  std::string text;
  for (std::size_t r = 0; r < view.ranks.size(); ++r) {
    if (std::atomic_ref<std::int32_t>(view.ranks[r].pid).load() == 0) {
      text += fmt::format("{}{}", text.empty() ? "" : ", ", r);
    }
  }
  return text;
}

// Counts this rank in and waits until every rank attached. The last one to attach removes the
// name before it announces completion, so nobody can create a segment of the same name (the
// creator's next group) before the old name is gone.
void await_everyone(ShmEndpoint& endpoint, const ShmSegment& segment, const SegmentView& view) {
  SyncWord& attached = view.header->attached;
  const auto everyone = static_cast<std::uint32_t>(endpoint.local_size());
  const std::uint32_t count =
      endpoint.local_rank() == 0
          ? 1
          : std::atomic_ref<std::uint32_t>(attached.arrivals).fetch_add(1) + 1;
  if (count == everyone) {
    segment.unlink_name();
    publish(attached, 1);
    return;
  }
  const std::string what = fmt::format("every rank to attach to {}", segment.name().text());
  const auto check = [&] {
    endpoint.check_not_broken();
    endpoint.check_ranks_alive(what);
  };
  if (wait_until_reached(attached, 1, endpoint.policy(), check)) return;
  endpoint.check_not_broken();
  endpoint.check_ranks_alive(what, true);
  endpoint.fail(
      ErrorKind::timeout,
      fmt::format("timed out after {} waiting for local ranks {} to attach to {}",
                  seconds(endpoint.policy().timeout), missing_ranks(view), segment.name().text()));
}

}  // namespace

std::string group_label(const GroupIdentity& group) {
  return fmt::format("shm group job {:016x} node {}{}, local rank {}", group.job_id, group.node_id,
                     group.instance == 0 ? "" : fmt::format(" instance {}", group.instance),
                     group.local_rank);
}

ShmSegment attach_group(const GroupIdentity& group, const WaitPolicy& policy) {
  ShmSegment segment = group.local_rank == 0 ? create(group) : join(group, policy);
  const SegmentView view = view_of(segment, group);
  ShmEndpoint endpoint(view, group.local_rank, policy, group_label(group));
  try {
    if (group.local_rank != 0) {
      check_single_copy(view);
      register_pid(endpoint, view.ranks[group.local_rank]);
    }
    await_everyone(endpoint, segment, view);
  } catch (...) {
    // The group never completed: nobody else will remove the name.
    if (!has_reached(view.header->attached, 1)) segment.unlink_name();
    throw;
  }
  return segment;
}

}  // namespace multilane::runtime::shm
