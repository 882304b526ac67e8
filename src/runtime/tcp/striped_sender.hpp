// runtime/tcp/striped_sender.hpp — the one striped sender: messages cut into pieces over the
// streams of one or more links, the stall watch of those streams, and the re-send of a stalled
// stream's doubtful share. The Engine's SendSide (collectives, and so the MPI library) and
// StreamSet (channels, relay, cp, MPWide) both send through it; each owns its sockets, decides
// which stream carries a message sent whole, and says how a stream writes its next frame
// (`Pump`).
//
//   message ──► ChunkFeed ──take_piece()──► stream's FrameOutbox ──► kernel ──► peer
//                  ▲                                   │ written(): recorded while the
//                  │ give_back(doubt)                  ▼ peer may not have it (resends)
//                  └──── resend_share() ◄── look_at(): a stalled stream, in the end game
//
// Pieces: an idle stream takes the next piece of the oldest message it may carry when it has
// written its last one (chunk_feed.hpp); only the first governor.in_use() streams of a link that
// are not stalled take pieces (stream_governor.hpp), and stalled ones only when every stream of
// the link is stalled.
//
// The crowd: links that adapt (the WAN's) to several destinations at once share one bottleneck,
// the wide-area path and this node's lanes. While split messages to N such destinations are in
// flight, each link takes pieces on in_use() / N of its streams (at least one), so that N
// destinations open about as many streams as one does: an alltoall across sites, which sends
// to every remote rank at once, otherwise starts N times K congestion windows into the path's
// queue (on two-sites-4x2, 128 per direction with K = 4; docs/runtime.md).
//
// Stalls: the owner has look_at() sample a link's streams (TCP_INFO) while split messages are in
// flight on it. A stalled stream takes no more pieces. In a message's end game (every piece
// handed out, and a stream of it that moves has nothing left to write) a stalled stream's
// doubtful share, what it wrote that the peer has not acknowledged and the unwritten rest of the
// frame it is writing, goes back to the message's feed, marked re-sent, ahead of any bytes never
// sent: that write is interrupted first (the stream keeps the frame's rest, which the peer's
// reader expects, as an owned copy). Before the end game the kernel usually retransmits a
// stalled stream's bytes before the message ends.
//
// The kept tail: once a message's last frame is in the kernel, its caller may have the buffer
// back while a copy of what TCP has not acknowledged yet stays here (keep_tail()); a stream that
// stalls holding some of it has that share sent again from the copy at once. The tail settles
// once no stream holds an unacknowledged frame of it.
//
// Not thread-safe: every call runs on the owner's io_context.
#pragma once

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <list>
#include <memory>
#include <optional>
#include <span>
#include <vector>

#include "runtime/tcp/byte_ranges.hpp"
#include "runtime/tcp/chunk_feed.hpp"
#include "runtime/tcp/frame_outbox.hpp"
#include "runtime/tcp/kept_bytes.hpp"
#include "runtime/tcp/stall_watch.hpp"
#include "runtime/tcp/stream_governor.hpp"
#include "runtime/tcp/stream_progress.hpp"
#include "runtime/tcp/wire.hpp"

namespace multilane::runtime {

struct StripedMessage;
struct StripeLink;
using StripeOutbox = FrameOutbox<std::shared_ptr<StripedMessage>>;

// One stream as the sender sees it. Its owner derives from it and says whether it can write.
class StripeStream {
 public:
  StripeStream() = default;
  StripeStream(StripeStream&&) = default;
  StripeStream& operator=(StripeStream&&) = default;
  virtual ~StripeStream() = default;
  // The socket to sample, or -1 when there is none (not connected, closed).
  virtual int fd() = 0;
  // Connected and not closed.
  virtual bool open() const = 0;

  bool idle() const { return out.idle() && open(); }
  // Writing a frame that borrows `message`'s bytes.
  bool writes(const StripedMessage& message) const {
    return out.writes_borrowed() && out.front().message.get() == &message;
  }

  StripeLink* link = nullptr;
  int index = 0;  // within its link
  StripeOutbox out;
  bool stalled = false;  // at the last look of its link
};

// The streams of one path to one peer (a lane of a peer, or a StreamSet), watched together:
// the governor decides how many of them take pieces, from their stalls.
struct StripeLink {
  StripeLink(int streams, bool adapts)
      : governor({.streams = streams, .adapts = adapts}), watch(streams) {}
  std::vector<StripeStream*> streams;
  StreamGovernor governor;
  StallWatch watch;
  int destination = 0;             // the peer it reaches (0 or more): its links crowd once
  int split_messages = 0;          // split messages in flight over it
  PathSample path;                 // at the last look
  std::uint64_t acknowledged = 0;  // the streams' acknowledged bytes then, added up
};

// A message in flight: sent whole on one stream, or split into pieces over `streams`.
struct StripedMessage {
  // Its frames' header: flags of its pieces (kFrameStriped, ...), job, call, message id,
  // signature and total; each frame sets its offset and length.
  FrameHeader header{};
  std::span<const std::byte> bytes{};  // the caller's, until it has its message back
  std::optional<KeptBytes> tail{};     // kept after the caller has it back (keep_tail())
  ChunkFeed feed{};                    // split: pieces not handed to a stream yet
  int frames_left = 0;                 // frames queued on streams and not written yet
  std::uint64_t handed_over = 0;       // payload bytes in the kernel (a re-sent range twice)
  Clock::time_point last_progress{};
  std::vector<StripeStream*> streams{};  // every stream that may carry a frame of it
  std::vector<StripeLink*> links{};      // their links
  bool split = false;
  bool resends = false;  // its frames are recorded and stalled shares go again
  bool stalled = false;  // split: a stream carrying it stalled (for the governor)
  bool finished = false;
  MessagePace pace{};

  std::uint64_t size() const { return header.total; }
  bool all_handed_out() const { return frames_left == 0 && feed.empty(); }
  std::span<const std::byte> of(const ByteRange& range) const {
    return tail ? tail->of(range) : bytes.subspan(range.offset, range.length);
  }
};

struct StripeCounters {
  std::uint64_t stalls = 0;        // stalled shares sent again
  std::uint64_t resent_bytes = 0;  // their bytes
};

class StripedSender {
 public:
  // `pump(stream)`: writes the stream's next frame unless it is writing, after taking a piece
  // (take_piece()) when its outbox is empty. `probe`: the streams' TCP figures (empty:
  // tcp_progress).
  using Pump = std::function<void(StripeStream&)>;
  StripedSender(Pump pump, StreamProgressProbe probe);

  // Tracks `message` until forget(): sent whole, its frames queued by the owner.
  void add(const std::shared_ptr<StripedMessage>& message);
  // Tracks `message` and splits it over its streams (set by the caller, with its links);
  // `resends`: its frames are recorded and a stalled stream's share goes again. The streams
  // that can take pieces take them now.
  void start_split(const std::shared_ptr<StripedMessage>& message, ChunkFeed feed, bool resends);
  // Queues on `stream` the next piece of the oldest split message it may carry; false if none.
  bool take_piece(StripeStream& stream);
  // Whether `stream` takes pieces now (see the top of this file).
  bool takes_pieces(const StripeStream& stream) const;
  // How many streams of `link` take pieces now: its governor's, shared with the crowd.
  int streams_taking_pieces(const StripeLink& link) const;
  // Destinations with split messages in flight over links that adapt.
  int crowd() const { return crowd_; }

  // The front frame of `stream` went to the kernel whole (`bytes`: all of it). Returns its
  // message when that was its last frame and nothing of it is left to send, else null.
  std::shared_ptr<StripedMessage> written(StripeStream& stream, std::size_t bytes);
  // The front frame's write was interrupted after `bytes` bytes: its share goes again.
  void interrupted(StripeStream& stream, std::size_t bytes);

  // Samples the streams of `link`: acknowledged frames are forgotten, stalls reported to the
  // governor, stalled streams' shares in the end game sent again, recovered streams pumped.
  void look_at(StripeLink& link, Clock::time_point now, const StallPatience& patience,
               const StallPatience& endgame_patience);
  // Samples again only the streams of `link` found stalled at the last look.
  void look_again_at_stalled(StripeLink& link, Clock::time_point now,
                             const StallPatience& patience);
  // The streams' acknowledged bytes now, for a message's pace (one system call per stream).
  void sample_acknowledged(StripeLink& link);
  // A split message in flight over `link` is in its end game (kept tails aside).
  bool in_endgame(const StripeLink& link) const;

  // Keeps a copy of what TCP has not acknowledged of `message` (its buffer goes back to the
  // caller); false when nothing is left to keep.
  bool keep_tail(StripedMessage& message);
  // Every frame of `message` went and no stream holds one the peer has not acknowledged.
  bool delivered(const StripedMessage& message) const;
  // The kept tails that are delivered, for the owner to finish.
  std::vector<std::shared_ptr<StripedMessage>> settled_tails() const;
  // Forgets every recorded frame of `stream` the peer acknowledged.
  void forget_acknowledged(StripeStream& stream);
  // `message` is over (done or failed): no longer tracked, no piece of it goes out any more.
  void forget(const std::shared_ptr<StripedMessage>& message);
  // Tells the governors of a split message's links how it went.
  void report_done(const StripedMessage& message) const;

  // Unfinished messages, oldest first.
  const std::list<std::shared_ptr<StripedMessage>>& messages() const { return messages_; }
  StripeCounters counters() const;  // thread-safe
  StreamProgress probe(StripeStream& stream) const;

 private:
  bool in_endgame(const StripedMessage& message) const;
  void join_crowd(int destination);
  void leave_crowd(int destination);
  void report_stalls(StripeLink& link, const std::vector<StripeStream*>& newly_stalled,
                     Clock::duration hold, Clock::time_point now);
  void forget_acknowledged(StripeStream& stream, const StreamProgress& progress);
  void resend_stalled_share(StripeStream& stream);
  bool resend_stalled_shares(const std::shared_ptr<StripedMessage>& message);
  void resend_share(StripeStream& stream, const std::shared_ptr<StripedMessage>& message,
                    const ByteRange& unwritten);
  ByteRanges take_doubt(StripeStream& stream, const StripedMessage& message);
  static bool holds_unacknowledged(const StripeStream& stream, const StripedMessage& message);

  Pump pump_;
  StreamProgressProbe probe_;
  std::list<std::shared_ptr<StripedMessage>> messages_;  // unfinished
  std::list<std::shared_ptr<StripedMessage>> feeding_;   // split, with pieces left, oldest first
  // Per destination, its split messages in flight over links that adapt (sized once per peer).
  std::vector<int> messages_to_;
  int crowd_ = 0;  // destinations with one or more
  std::atomic<std::uint64_t> stalls_{0};
  std::atomic<std::uint64_t> resent_bytes_{0};
};

}  // namespace multilane::runtime
