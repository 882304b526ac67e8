// runtime/shm/layout.hpp — what a group's shared-memory segment contains, and where.
//
//   SegmentHeader        identity (job, node, instance, ranks, capacity), the attach counter,
//                        the "broken" word and the reason a group broke, the learned copy
//                        paths
//   RankRecord[p]        per local rank: pid (0 until attached), whether it left, its call,
//                        the times of its last timed calls
//   RootRecord[p]        per local rank: what it decided for the calls it roots (the root's
//                        shares, the learned copy paths of bcast and scatter)
//   SlotHeader[64]       per pipeline buffer: `filled` and `drained` sync words, and the
//                        bytes of a tiny call (kInlineBytes)
//   FlaggedLine[64 x 4]  per pipeline buffer: the bytes of a small call's stage that has one
//                        writer (kFlaggedBytes), each cache line with its own flag
//   data area            `capacity` bytes, page aligned, cut into pipeline buffers per call
//
// Every field shared between ranks is accessed through std::atomic_ref, except the data area
// (plain copies, ordered by the sync words) and the fields the creator writes before it
// publishes `magic`. Every record and sync word has a cache line of its own.
#pragma once

#include <cstddef>
#include <cstdint>
#include <span>

#include "runtime/shm/sync_word.hpp"

namespace multilane::runtime::shm {

inline constexpr std::uint64_t kSegmentMagic = 0x314d48534c4d4c4dULL;  // "MLMLSHM1"
inline constexpr std::uint32_t kLayoutVersion = 9;
inline constexpr int kMaxPipelineBuffers = 64;
inline constexpr int kMaxLocalSize = 4096;
inline constexpr std::size_t kReasonBytes = 256;
// Learned copy paths, 8 block-size classes per collective (copy_chooser.hpp): alltoall and
// allgather in the header (local rank 0 learns them), bcast and scatter in the root's record.
inline constexpr std::size_t kCopyChoiceClasses = 8;
inline constexpr std::size_t kCopyChoiceWords = 2 * kCopyChoiceClasses;
inline constexpr std::size_t kRootedCopyChoiceWords = 2 * kCopyChoiceClasses;
// Learned root's shares: bcast, scatter and gather, 16 block-size classes each (root_share.hpp).
inline constexpr std::size_t kRootShareClasses = 16;
inline constexpr std::size_t kRootShareWords = 3 * kRootShareClasses;

struct alignas(64) SegmentHeader {
  std::uint64_t magic = 0;  // published last by the creator
  std::uint32_t version = 0;
  std::uint32_t local_size = 0;
  std::uint64_t job_id = 0;
  std::uint32_t node_id = 0;
  std::uint32_t instance = 0;
  std::uint64_t capacity = 0;      // bytes of the data area
  alignas(64) SyncWord attached;   // arrivals: ranks that mapped the segment; value: 1 once all did
  alignas(64) SyncWord broken;     // value: 0, or 1 + the local rank that broke the group
  char reason[kReasonBytes] = {};  // why, written by that rank before it publishes `broken`
  std::uint8_t reason_kind = 0;    // the ErrorKind of `reason`, written with it
  // Single copy (Expose/DirectGet/DirectPut) needs every rank to be allowed to read and write
  // the others' memory. The creator publishes where this header is in its own address space;
  // every other rank reads the magic there before it attaches and counts a refusal here.
  std::uint64_t creator_header_address = 0;
  std::uint32_t single_copy_refusals = 0;
  // The copy path of each class of call that learns it, written by local rank 0 only.
  alignas(64) std::uint64_t copy_choices[kCopyChoiceWords] = {};
};

// What an Expose writes into the stage's buffer: where the exposed bytes are. When they lie in
// a SharedBuffer (multilane/shared_buffer.hpp), also which one, so that the other ranks map it
// and copy with memcpy rather than through the kernel (peer_regions.hpp).
struct ExposedBuffer {
  std::uint64_t address = 0;  // in the exposing rank's address space
  std::int32_t pid = 0;
  std::int32_t region_fd = -1;      // the SharedBuffer's memfd in process `pid`; -1: none
  std::uint64_t region_inode = 0;   // tells that memfd from a later one with the same number
  std::uint64_t region_offset = 0;  // of `address` in the SharedBuffer
};
inline constexpr std::uint64_t kExposedBytes = sizeof(ExposedBuffer);

// The call a rank is in, so that ranks can tell that they disagree (call_check.hpp).
struct CallRecord {
  std::uint64_t serial = 0;    // 1 for the group's first collective call, then 2, 3, ...
  std::uint64_t shape = 0;     // collective and root, packed
  std::uint64_t size = 0;      // bytes per block (the whole message for bcast)
  std::uint64_t geometry = 0;  // buffer size and pipeline buffers, packed
};

struct alignas(64) RankRecord {
  std::int32_t pid = 0;    // 0 until the rank attached
  std::uint32_t left = 0;  // 1 once the rank left the group normally (its process may exit)
  CallRecord call;
  // How long the rank's last two timed calls whose copy path is learned took, for local
  // rank 0's learner (copy_chooser.hpp): serial and nanoseconds, packed.
  std::uint64_t call_times[2] = {};
  // How long the rank copied in its last call whose root's share is learned, serial and
  // nanoseconds packed as call_times (root_share.hpp); written before the rank releases the
  // stage, so the root reads it once every rank released.
  std::uint64_t copy_time = 0;
};
static_assert(sizeof(RankRecord) == 64);

// What this rank decided for each class of call that it roots, written by this rank only: the
// root's share of single-copy bcast, scatter and gather (root_share.hpp), and the copy path
// of bcast and scatter (copy_chooser.hpp).
struct alignas(64) RootRecord {
  std::uint64_t shares[kRootShareWords] = {};
  std::uint64_t copy_choices[kRootedCopyChoiceWords] = {};
};

// Both words of a buffer share one cache line: a writer checks `drained` and then writes
// `filled`, a reader the other way round, so each side moves one line instead of two. A call
// whose shared bytes fit in the rest of the line (an 8-byte call on two ranks) keeps them
// there instead of in the data area (Step::in_header): the reader that sees `filled` then
// holds the bytes too, one line transfer instead of two, and so does the writer's put.
inline constexpr std::size_t kInlineBytes = 64 - 2 * sizeof(SyncWord);
struct alignas(64) SlotHeader {
  SyncWord filled;   // 1 + the last stage whose writers all synced; `tag` counts them (endpoint)
  SyncWord drained;  // 1 + the last stage whose readers all finished reading
  std::byte inline_data[kInlineBytes];
};
static_assert(sizeof(SlotHeader) == 64);

// A small stage's bytes in lines that carry their own flag (NCCL's LL128 protocol has the same
// idea): a reader that waits on the flags of the lines it reads fetches them all at once,
// where waiting on `filled` and then reading the data area costs two line transfers in a row,
// and a third when the writer first fetches the data line. For stages with one writer (every
// stage of a small bcast, scatter, row of alltoall or allgather, and gather on two ranks):
// the writer stamps every line it wrote after its bytes, then publishes `filled` as usual (for
// readers that sleep, and the call check's tag). A flag holds the stage's sync value (low 32
// bits) and the low 32 bits of the writer's call fingerprint (high), which the reader compares
// with its own; a difference sends it the slow way, to `filled` and the whole tag.
inline constexpr std::size_t kFlaggedLineBytes = 56;  // of each line's 64; the flag is the rest
inline constexpr std::size_t kFlaggedLinesPerSlot = 4;
inline constexpr std::size_t kFlaggedBytes = kFlaggedLineBytes * kFlaggedLinesPerSlot;
struct alignas(64) FlaggedLine {
  std::byte data[kFlaggedLineBytes];
  std::uint64_t flag = 0;
};
static_assert(sizeof(FlaggedLine) == 64);

// Pointers into one mapped segment.
struct SegmentView {
  SegmentHeader* header = nullptr;
  std::span<RankRecord> ranks;
  std::span<RootRecord> roots;   // one per rank
  std::span<SlotHeader> slots;   // kMaxPipelineBuffers of them
  std::span<FlaggedLine> lines;  // kFlaggedLinesPerSlot per slot, slot by slot
  std::byte* data = nullptr;
  std::size_t capacity = 0;
};

// Bytes a segment needs for `local_size` ranks and a data area of `capacity` bytes.
std::size_t segment_bytes(int local_size, std::size_t capacity);
// The parts of a segment of segment_bytes(local_size, capacity) bytes at `base`.
SegmentView view_segment(std::byte* base, int local_size, std::size_t capacity);

}  // namespace multilane::runtime::shm
