// wan/file_client.hpp — the client's side of `multilane cp FILE HOST:PATH` (file_protocol.hpp).
//
// Opens a path of N streams to the server (directly or through a relay) with the channels API,
// asks for the destination, resumes from what a partial file on the server already holds when
// its XXH3-64 matches the same bytes here, sends the rest block by block (at most kCopyWindow
// blocks unacknowledged) and sends the whole file's digest at the end; the server keeps the
// file only if it matches. `progress` is called after every acknowledged block.
//
// Failures throw CopyError with a sentence for the user: the server's refusal ("... exists on
// the server (use --force to overwrite it)"), its write error (full disk), or a vanished
// server, each saying how much the server holds for a resume. A local file that cannot be read
// is a UsageError.
#pragma once

#include <cstdint>
#include <functional>
#include <stdexcept>
#include <string>

#include "multilane/channels.hpp"

namespace multilane::wan {

// A copy that failed; kind() (multilane/errors.hpp) says why.
class CopyError : public Error {
 public:
  using Error::Error;
};

struct CopyOptions {
  std::string source;  // local file
  std::string host;    // the server
  std::uint16_t port = 0;
  std::string destination;  // path on the server, relative to its directory
  std::string relay;        // "host:port" of a relay, or ""
  channels::Credentials credentials;
  channels::PathOptions path;  // streams, buffers, pacing, timeout
  std::uint64_t block_size = 4 << 20;
  bool force = false;
};

struct CopyProgress {
  std::uint64_t held = 0;          // bytes the server acknowledged
  std::uint64_t size = 0;          // of the file
  std::uint64_t resumed_from = 0;  // bytes the server already had at the start
};

struct CopyResult {
  std::uint64_t size = 0;
  std::uint64_t resumed_from = 0;
  std::uint64_t digest = 0;  // XXH3-64 of the file
};

CopyResult copy_file(const CopyOptions& options,
                     const std::function<void(const CopyProgress&)>& progress);

}  // namespace multilane::wan
