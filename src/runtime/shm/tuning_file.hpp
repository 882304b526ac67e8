// runtime/shm/tuning_file.hpp — the shared-memory tuning the runtime reads (written by
// `multilane tune shm`): per collective and call size, the paper's two parameters and how
// the call copies.
//
//   # multilane shm tuning: 2 local ranks
//   [[shm]]
//   collective = "bcast"       # bcast, scatter, gather, allgather or alltoall
//   max_size = 65536           # bytes per block (the whole message for bcast): calls up to
//                              # this size, down to the previous entry's, use this entry
//   buffer_size = 16384        # B, bytes of one pipeline buffer (>= 64)
//   pipeline_buffers = 8       # 1 .. 64
//   copies = "twice"           # optional: "once" (cross-memory attach), "twice" (through the
//                              # pipeline buffers) or "auto" (the group's limits; the default)
//
// A call larger than every entry of its collective uses the largest; a collective without
// entries uses the group's defaults. Errors name the file, line and key.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "multilane/schedule.hpp"
#include "runtime/shm/shm_group.hpp"

namespace multilane::runtime::shm {

struct TuningEntry {
  Collective collective = Collective::Bcast;
  std::uint64_t max_size = 0;
  ShmTuning tuning;
};

struct TuningTable {
  std::vector<TuningEntry> entries;
  // The tuning for a call of `size` bytes per block, or nothing (use the group's default).
  std::optional<ShmTuning> find(Collective collective, std::uint64_t size) const;
  // Bytes of data area the largest entry needs (0 without entries).
  std::uint64_t capacity() const;
  // Bytes of data area a group whose own tuning is `group_tuning` needs to run every entry too
  // (ShmOptions::capacity).
  std::uint64_t capacity_with(const ShmTuning& group_tuning) const;
};

// Throws UsageError "FILE:LINE: key: reason" (or "FILE: cannot open").
TuningTable read_tuning_file(const std::string& path);
// The file's text; `comment` (one line) goes on top.
std::string tuning_to_toml(const TuningTable& table, const std::string& comment);

// The environment variable naming a tuning file for every job of the runtime (read when the
// file exists; the MPI library also keeps its measured routes in it: mpi/route_tuning.hpp).
inline constexpr const char* kTuningEnvironment = "MULTILANE_TUNING";

}  // namespace multilane::runtime::shm
