// runtime/shm/call_record.hpp — which call a rank is in, packed into its RankRecord.
//
// Every rank writes its call (serial number, collective, root, size, pipeline buffers) into its
// record when it enters the call, so that errors can say where the other ranks are. Ranks that
// disagree on a call are caught by fingerprints (runtime/shm/endpoint.hpp): every writer of a
// stage adds its call's fingerprint to the buffer's sync word, and every reader checks that the
// sum is `writers` times its own.
#pragma once

#include <chrono>
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
  bool single_copy = false;      // plan.hpp's single-copy plan instead of Table 1's
  std::uint16_t root_share = 0;  // single-copy bcast, scatter, gather: CallShape::root_share
};
// Whether two calls are alike but for their serials (calls of a loop).
bool same_but_serial(const CallInfo& a, const CallInfo& b);

CallRecord pack(const CallInfo& call);
CallInfo unpack(const CallRecord& record);
// "call 3 (bcast of 100 B from root 0, 8 buffers of 64 KiB)", "call 4 (barrier)",
// "call 5 (scatter of 1 MiB from root 0, single copy)", "call 6 (gather of 1 MiB from root 0,
// single copy, root's share 12.5%)".
std::string describe(const CallInfo& call);

// A record is rewritten at every call while other ranks may read it, so it is a seqlock: the
// serial is 0 while the fields change. load_record() reads again for up to 5 ms while a
// record is being rewritten, then returns nullopt (no call yet, or a rank that stays off its
// core in the middle of a rewrite). Only error messages read records.
void store_record(RankRecord& rank, const CallRecord& call);
// store_record() of a call that is same_but_serial() as the record's.
void store_serial(RankRecord& rank, std::uint64_t serial);
std::optional<CallRecord> load_record(RankRecord& rank);

// How long a rank took in a call, for another rank to read (RankRecord::call_times and
// copy_time): the serial's low 24 bits, enough to tell the call from the ones before it, and up
// to 2^40 ns. call_time_of() is nullopt when `packed` is not call `serial`'s.
std::uint64_t pack_call_time(std::uint64_t serial, std::chrono::nanoseconds took);
std::optional<std::chrono::nanoseconds> call_time_of(std::uint64_t packed, std::uint64_t serial);

// A 64-bit digest of the whole call (serial included), never 0: fingerprint(serial, digest)
// with the digest of everything else, which calls of a loop share.
std::uint64_t fingerprint(const CallInfo& call);
std::uint64_t digest_but_serial(const CallInfo& call);
std::uint64_t fingerprint(std::uint64_t serial, std::uint64_t digest_but_serial);

}  // namespace multilane::runtime::shm
