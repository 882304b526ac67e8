// wan/duplex_path.hpp — one path that one thread sends on while another thread receives.
//
// A Channels object serves one call at a time, so a program that sends on a path from one
// thread while another thread waits for the peer's message on it (MPWide allows that, and its
// TestConcurrent does it) would deadlock: the receive blocks the send the peer waits for. A
// DuplexPath owns one established stream set and a thread that drives it; callers hand it
// one send and one receive at a time (a second caller of the same direction waits its
// turn), so the two directions progress independently.
//
// Contract: the stream set's (stream_set.hpp): messages matched in order, exact or up-to
// receive sizes, a call fails when its direction made no progress for the options' timeout,
// and a failed path stays failed. Thread-safe. Destroying the path ends it for the peer.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <span>
#include <string>

#include "runtime/streams/stream_set.hpp"
#include "wan/path_connect.hpp"

namespace multilane::wan {

class DuplexPath {
 public:
  // Opens the path's streams to `target` or accepts them on `listener`, bounded by
  // options.timeout; throws TransportError (or UsageError) naming what failed.
  static std::unique_ptr<DuplexPath> connect(const PathTarget& target,
                                             const runtime::StreamOptions& options);
  static std::unique_ptr<DuplexPath> accept(runtime::StreamListener& listener,
                                            const runtime::StreamOptions& options);
  ~DuplexPath();
  DuplexPath(const DuplexPath&) = delete;
  DuplexPath& operator=(const DuplexPath&) = delete;

  // Sends `data` (when given) and receives into `buffer` (when given) at once; returns the
  // received message's size (0 without a receive). Throws the path's TransportError.
  std::uint64_t exchange(std::optional<std::span<const std::byte>> data,
                         std::optional<std::span<std::byte>> buffer,
                         runtime::ReceiveSize size = runtime::ReceiveSize::Exact);
  std::string peer() const;
  int streams() const;

  struct Impl;

 private:
  explicit DuplexPath(std::unique_ptr<Impl> impl);
  std::unique_ptr<Impl> impl_;
};

}  // namespace multilane::wan
