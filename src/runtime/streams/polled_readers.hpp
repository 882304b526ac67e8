// runtime/streams/polled_readers.hpp — frame readers that a spinning caller reads itself,
// instead of waiting for the reactor to report their sockets readable.
//
// A blocking call whose caller spins on the io_context (Engine::run_blocking) sees a small
// message sooner by reading the waiting sockets directly: one recv() that returns the bytes,
// where the reactor costs an epoll_wait(), then the recv(), and asio's dispatch between them
// (bench/tcp_floor on loopback: 8.2 against 11.3 us a round trip), and the rest of a large one
// as it comes. While polling is on, a reader that would wait for readiness lists itself here
// instead (at most kMostPolled; the others wait as usual). Whoever drives the io_context
// without polling (the progress thread, a caller about to sleep) calls stop_polling() first,
// which hands every listed reader back to the reactor, so that no socket goes unwatched while
// nobody polls.
//
// Threading: used only by the thread running the io_context.
#pragma once

#include <cstddef>
#include <vector>

namespace multilane::runtime {

class FrameReader;

class PolledReaders {
 public:
  // More sockets than this cost more in empty reads than one epoll_wait() saves.
  static constexpr std::size_t kMostPolled = 4;

  PolledReaders() = default;
  PolledReaders(const PolledReaders&) = delete;
  PolledReaders& operator=(const PolledReaders&) = delete;

  void start_polling() { polling_ = true; }
  // Every listed reader waits for readiness through the reactor again.
  void stop_polling();
  // Reads the listed readers' sockets until one took bytes (or ended); true if one did.
  bool poll();

  // For FrameReader: lists a reader that found its socket empty (false: it waits through the
  // reactor), and forgets one that is read or destroyed.
  bool list(FrameReader& reader);
  // Whether list() would take a reader now.
  bool has_room() const { return polling_ && readers_.size() < kMostPolled; }
  void forget(const FrameReader& reader);

 private:
  bool polling_ = false;
  std::vector<FrameReader*> readers_;
};

}  // namespace multilane::runtime
