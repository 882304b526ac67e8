// wan/file_receiver.hpp — the server's side of one copy (file_protocol.hpp), over a stream set.
//
// Validates the request (file_destination.hpp), offers what a partial file of an earlier
// attempt holds (its length and XXH3-64), writes each block at its place once it arrived whole
// and acknowledges it, and on Finish compares the digests: equal, the partial file is synced
// and renamed into place; different, it is removed. A write error (full disk, ...) is sent to
// the client in the block's acknowledgement; a client that vanishes or stalls ends the
// conversation. In both cases the partial file is kept for a resume and the outcome says so.
// Two copies to the same destination at once are refused (CopyRegistry).
#pragma once

#include <filesystem>
#include <mutex>
#include <set>
#include <string>

#include "runtime/streams/stream_set.hpp"

namespace multilane::wan {

// Destinations with a copy in progress (shared by a server's sessions).
class CopyRegistry {
 public:
  bool claim(const std::filesystem::path& path);
  void release(const std::filesystem::path& path);

 private:
  std::mutex mutex_;
  std::set<std::filesystem::path> busy_;
};

struct ReceiveOutcome {
  bool completed = false;  // the file is in place
  std::string text;        // one line for the server's log
};

inline constexpr std::uint64_t kMinBlock = 4 * 1024;
inline constexpr std::uint64_t kMaxBlock = 64 * 1024 * 1024;

ReceiveOutcome receive_copy(runtime::StreamSet& set, const std::filesystem::path& root,
                            CopyRegistry& registry);

}  // namespace multilane::wan
