// runtime/tcp/polled_readers.hpp — frame readers that a spinning caller reads itself,
// instead of waiting for the reactor to report their sockets readable.
//
// A blocking call whose caller spins on the io_context (Engine::run_blocking) sees a small
// message sooner by reading the waiting sockets directly: one recv() that returns the bytes,
// where the reactor costs an epoll_wait(), then the recv(), and asio's dispatch between them
// (bench/tcp_floor measures both round trips on loopback), and the rest of a large one
// as it comes. While polling is on, a reader that would wait for readiness lists itself here
// instead (at most kMostPolled; the others wait as usual). Whoever drives the io_context
// without polling (the progress thread, a caller about to sleep) calls stop_polling() first,
// which hands every listed reader back to the reactor, so that no socket goes unwatched while
// nobody polls.
//
// Awaited frames first: a reader whose owner counts the receives that wait for its stream
// (StreamDemand) is read in a round only while one waits, and otherwise every
// kEveryReaderRound-th round (so early frames, and a sender that a full socket holds up, still
// move). A frame of a later call thus stays in the kernel until its receive is posted, and this
// rank's next frame to that peer, sent first, carries the acknowledgement: a read that drains a
// socket holding two small frames makes the kernel send one of its own at once (the reader
// also takes one frame per read where the two ranks exchange frames, frame_reader.hpp). On
// loopback an 8-rank alltoall of 8 B sends 55-56 TCP segments a call this way (its 56 messages
// carry the acknowledgements), against 66 when every listed socket is read each round.
//
// Threading: used only by the thread running the io_context.
#pragma once

#include <cstddef>
#include <cstdint>
#include <vector>

namespace multilane::runtime {

class FrameReader;

// What one peer's streams are used for, counted by their owner and read by their readers: the
// receives posted and not complete that wait for the peer's frames, and the sends to the peer.
struct StreamDemand {
  int waiting = 0;
  std::uint64_t sends = 0;
};

class PolledReaders {
 public:
  // Each listed socket that a receive waits for costs an empty read per round while nothing has
  // come; more than this cost more than one epoll_wait() saves. Room for the peers of an
  // 8-rank alltoall on one node.
  static constexpr std::size_t kMostPolled = 8;
  // Readers that nobody waits for are read in every this many rounds.
  static constexpr unsigned kEveryReaderRound = 16;

  PolledReaders() { readers_.reserve(kMostPolled); }
  PolledReaders(const PolledReaders&) = delete;
  PolledReaders& operator=(const PolledReaders&) = delete;

  void start_polling() { polling_ = true; }
  // Every listed reader waits for readiness through the reactor again.
  void stop_polling();
  // Reads the listed readers' sockets (those waited for, see above) until one took bytes (or
  // ended); true if one did.
  bool poll();

  // For FrameReader: lists a reader that found its socket empty (false: it waits through the
  // reactor), and forgets one that is read or destroyed.
  bool list(FrameReader& reader);
  // Whether list() would take a reader now.
  bool has_room() const { return polling_ && readers_.size() < kMostPolled; }
  void forget(const FrameReader& reader);

 private:
  bool polling_ = false;
  unsigned rounds_ = 0;
  std::vector<FrameReader*> readers_;
};

}  // namespace multilane::runtime
