// runtime/shm/call_record.hpp — which call a rank is in, packed into its RankRecord.
//
// Every rank writes its call (serial number, collective, root, size, pipeline buffers) into its
// record before its first step; a reader that synced with a writer compares the two, so that
// ranks calling different collectives, roots or sizes fail with a message naming both calls
// instead of exchanging wrong bytes or hanging until the timeout.
#pragma once

#include <cstdint>
#include <optional>
#include <string>

#include "multilane/schedule.hpp"
#include "runtime/shm/layout.hpp"
#include "runtime/shm/step.hpp"

namespace multilane::runtime::shm {

struct CallInfo {
  std::uint64_t serial = 0;              // 1, 2, ... per group
  std::optional<Collective> collective;  // nullopt: barrier
  int root = 0;
  std::uint64_t size = 0;  // bytes per block (the whole message for bcast)
  Geometry geometry;
};

CallRecord pack(const CallInfo& call);
CallInfo unpack(const CallRecord& record);
// "call 3 (bcast of 100 B from root 0, 8 buffers of 64 KiB)", "call 4 (barrier)".
std::string describe(const CallInfo& call);

// A record is rewritten at every call while other ranks may read it, so it is a seqlock: the
// serial is 0 while the fields change. load_record() returns nullopt for a record being
// rewritten (its rank has moved on to another call).
void store_record(RankRecord& rank, const CallRecord& call);
std::optional<CallRecord> load_record(RankRecord& rank);

// Whether a writer in call `theirs` may have produced a stage of our call `ours`: the same call,
// or a later one (it moved on; nothing to compare). An empty string when consistent, else the
// reason, e.g. "local rank 0 is in call 3 (bcast ...) but this rank in call 3 (scatter ...)".
std::string call_mismatch(const CallInfo& ours, const CallInfo& theirs, int their_rank);

}  // namespace multilane::runtime::shm
