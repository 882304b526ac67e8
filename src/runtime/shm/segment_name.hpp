// runtime/shm/segment_name.hpp — names of the POSIX shared-memory segments, and their cleanup.
//
// One segment per node, job and group instance, created by local rank 0 and named
//   /multilane-<job id, 16 hex digits>-<node id>-<instance>-<creator pid>
// (on Linux the file /dev/shm/multilane-...). The name carries everything needed to find the
// segment of a group and to decide whether it is stale: a segment whose creator is no longer
// alive belongs to a dead job and may be removed by anyone (the launcher, the next job).
//
// A group removes its segment's name as soon as every rank has mapped it (the mapping outlives
// the name), so a name only exists while a group is being set up, and stale names are left only
// by ranks that died during setup.
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace multilane::runtime::shm {

struct SegmentName {
  std::uint64_t job_id = 0;
  std::uint32_t node_id = 0;
  std::uint32_t instance = 0;
  pid_t creator = 0;

  // "/multilane-000000000000002a-0-0-4711", the argument of shm_open / shm_unlink.
  std::string text() const;
  // Parses a directory entry of /dev/shm (without the leading '/'); nullopt for other files.
  static std::optional<SegmentName> parse(std::string_view entry);
  friend bool operator==(const SegmentName&, const SegmentName&) = default;
};

// The directory where Linux keeps POSIX shared-memory objects.
inline constexpr const char* kShmDirectory = "/dev/shm";

// Every multilane segment present now, optionally only those of one job (and node).
std::vector<SegmentName> list_segments(std::optional<std::uint64_t> job_id = std::nullopt,
                                       std::optional<std::uint32_t> node_id = std::nullopt);

// Removes one segment's name (the memory goes when the last mapping does). False if it was gone.
bool remove_segment(const SegmentName& name);

// Removes the names of the segments this process created, and returns how many it removed. For
// a process about to abort: the memory stays mapped for its threads still in a call, and for
// the other ranks attached, until each one's last mapping goes.
int remove_own_segments();

// Removes the segments whose creator is no longer alive (optionally only those of one job) and
// returns their names. Segments of live creators are left alone.
std::vector<SegmentName> remove_stale_segments(std::optional<std::uint64_t> job_id = std::nullopt);

}  // namespace multilane::runtime::shm
