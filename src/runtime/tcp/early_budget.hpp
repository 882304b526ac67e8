// runtime/tcp/early_budget.hpp — the bytes of frames kept in memory until their receive is
// posted (the Engine's early chunks, StreamSet's frames read ahead), counted against one limit.
//
// A frame that does not fit waits on its stream instead (FrameReader's park), so a sender that
// runs ahead costs the receiver a bounded amount of memory. Not thread-safe: the owner's
// io_context thread counts.
#pragma once

#include <cstdint>

namespace multilane::runtime {

class EarlyBudget {
 public:
  // Whether `bytes` more fit under `limit` (the owner's limit may follow its posted receive).
  bool fits(std::uint64_t bytes, std::uint64_t limit) const { return held_ + bytes <= limit; }
  // A frame's payload is kept (counted from the start of its read).
  void hold(std::uint64_t bytes) { held_ += bytes; }
  // ... and is copied into its receive or dropped.
  void release(std::uint64_t bytes) { held_ -= bytes; }
  std::uint64_t held() const { return held_; }

 private:
  std::uint64_t held_ = 0;
};

}  // namespace multilane::runtime
