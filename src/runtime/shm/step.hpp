// runtime/shm/step.hpp — the seven shared-memory primitives of the SMP paper as plain data.
//
// A collective on one node is a per-rank list of Steps (runtime/shm/plan.hpp), each one
// primitive with one clear wait, so an executor can run them one by one, poll them, or
// interleave them with network operations (runtime/shm/primitives.hpp runs them).
//
// Shared memory is a ring of pipeline buffers. One use of one buffer is a Stage: a fixed set of
// `writers` put bytes into it, sync, and then a fixed set of `readers` get bytes out of it; when
// the last reader is done the buffer may be reused by a later stage. Every stage of a group has
// a number (its index), the same on every rank, so ranks agree without talking.
//
//   primitive     paper's meaning                            waits for
//   SenderPut     the sender puts a message into the buffer  the buffer's previous readers
//   GroupSegPut   each of a group puts its part              the buffer's previous readers
//   PairSync      one writer -> one reader                   writer: as puts; reader: the writer
//   GroupSync     all writers -> all readers of the stage    writer: as puts; reader: all writers
//   ReceiverGet   the (one) receiver gets the message        -
//   GroupGet      each reader gets the whole message         -
//   GroupSegGet   each reader gets its own part              -
//   LocalCopy     (not shared memory) the rank's own block   -
//
// A sync has two sides: writers arrive, readers wait until every writer arrived. A writer's
// arrival waits for the buffer like a put (usually already granted by its put): a writer that
// puts nothing, as in a barrier, must not arrive while the buffer's previous stage is still
// being filled. Gets copy out; the reader's last get of a stage releases the buffer (`release`),
// in flagged lines once every writer arrived (releases_flagged_lines).
#pragma once

#include <cstdint>
#include <string_view>

namespace multilane::runtime::shm {

enum class Primitive : std::uint8_t {
  SenderPut,
  GroupSegPut,
  PairSync,
  GroupSync,
  ReceiverGet,
  GroupGet,
  GroupSegGet,
  LocalCopy,
  // Single copy (ours, not the paper's; see runtime/shm/plan.hpp): a rank exposes one of its
  // own buffers by writing its address into the stage's buffer; the others then copy straight
  // from it or into it (cross-memory attach, process_vm_readv/writev): one copy per byte.
  Expose,
  DirectGet,
  DirectPut,
};
std::string_view to_string(Primitive primitive);  // the paper's names: "Sender_put", ...

enum class SyncRole : std::uint8_t { Writer, Reader };

// One use of one pipeline buffer.
struct Stage {
  std::uint64_t index = 0;     // group-wide stage number
  std::uint64_t previous = 0;  // the stage that used this buffer before (if `reuses`)
  std::uint32_t slot = 0;      // which pipeline buffer
  std::uint32_t writers = 0;   // ranks that put and sync as writers
  std::uint32_t readers = 0;   // ranks that sync as readers and get
  bool reuses = false;         // false: the buffer is known to be free (first use since a drain)
  friend bool operator==(const Stage&, const Stage&) = default;
};

// Where a stage's bytes are (layout.hpp): in its pipeline buffer in the data area, or, for
// small calls, in its slot header (up to kInlineBytes) or its flagged lines (up to
// kFlaggedBytes, stages with one writer; flagged_lines.hpp).
enum class SharedPlace : std::uint8_t { DataArea, SlotHeader, FlaggedLines };

struct Step {
  Primitive primitive = Primitive::LocalCopy;
  SyncRole role = SyncRole::Writer;  // syncs only
  bool release = false;              // gets: the last get of this stage by this rank
  std::int32_t peer = -1;            // reader syncs: the writer; puts: the reader; -1: several
  Stage stage;
  // DataArea: the stage's buffer + where in it; SlotHeader, FlaggedLines: where in the stage's
  // bytes there. Syncs of a stage in FlaggedLines: with `length`, the bytes the writer wrote or
  // the reader reads, whose lines the writer stamps and the reader waits for.
  std::uint64_t slot_offset = 0;
  SharedPlace place = SharedPlace::DataArea;
  std::uint64_t offset = 0;   // puts: in the send buffer; gets, LocalCopy: in recv
  std::uint64_t source = 0;   // LocalCopy: offset in the send buffer
  std::uint64_t length = 0;   // puts, gets, copies; syncs in FlaggedLines (above)
  std::uint64_t remote = 0;   // DirectGet/DirectPut: offset in the peer's exposed buffer
  bool exposes_recv = false;  // Expose: the receive buffer (else the send buffer)
  friend bool operator==(const Step&, const Step&) = default;
};

inline bool is_put(Primitive p) {
  return p == Primitive::SenderPut || p == Primitive::GroupSegPut;
}
inline bool is_sync(Primitive p) {
  return p == Primitive::PairSync || p == Primitive::GroupSync;
}
inline bool is_get(Primitive p) {
  return p == Primitive::ReceiverGet || p == Primitive::GroupGet || p == Primitive::GroupSegGet;
}
inline bool is_direct(Primitive p) {
  return p == Primitive::DirectGet || p == Primitive::DirectPut;
}
// A reader sync that waits for the flags of the lines it will read instead of for `filled`.
inline bool waits_for_flags(const Step& step) {
  return is_sync(step.primitive) && step.role == SyncRole::Reader &&
         step.place == SharedPlace::FlaggedLines && step.length > 0;
}

// The last get of a stage in flagged lines releases the buffer: it waits for the stage's
// `filled` too. Its reader went by the stamps, which a writer makes before it adds its tag and
// publishes `filled` (endpoint.cpp); a buffer released before that would take the late
// writer's tag and `filled` into its next stage.
inline bool releases_flagged_lines(const Step& step) {
  return is_get(step.primitive) && step.release && step.place == SharedPlace::FlaggedLines;
}

// Puts and writer syncs need the buffer: its previous stage must have been read. (A writer that
// puts nothing still waits: its arrival must not count towards the buffer's previous stage.)
inline bool waits_for_free_buffer(const Step& step) {
  return is_put(step.primitive) || step.primitive == Primitive::Expose ||
         (is_sync(step.primitive) && step.role == SyncRole::Writer);
}

// The pipeline buffers of one call: `buffers` buffers of `buffer_size` bytes each.
struct Geometry {
  std::uint64_t buffer_size = 0;
  std::uint32_t buffers = 0;
  friend bool operator==(const Geometry&, const Geometry&) = default;
};

}  // namespace multilane::runtime::shm
