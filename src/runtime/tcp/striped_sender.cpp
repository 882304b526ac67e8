// runtime/tcp/striped_sender.cpp — StripedSender: messages tracked, pieces handed to streams,
// frames written (see striped_sender.hpp).
#include "runtime/tcp/striped_sender.hpp"

#include <algorithm>
#include <utility>

namespace multilane::runtime {

StripedSender::StripedSender(Pump pump, StreamProgressProbe probe)
    : pump_(std::move(pump)), probe_(std::move(probe)) {}

StripeCounters StripedSender::counters() const {
  return {.stalls = stalls_.load(std::memory_order_relaxed),
          .resent_bytes = resent_bytes_.load(std::memory_order_relaxed)};
}

StreamProgress StripedSender::probe(StripeStream& stream) const {
  const int fd = stream.fd();
  if (fd < 0) return {};
  return probe_ ? probe_(fd) : tcp_progress(fd);
}

void StripedSender::add(const std::shared_ptr<StripedMessage>& message) {
  message->last_progress = Clock::now();
  messages_.push_back(message);
}

void StripedSender::start_split(const std::shared_ptr<StripedMessage>& message, ChunkFeed feed,
                                bool resends) {
  add(message);
  message->split = true;
  message->resends = resends;
  message->feed = std::move(feed);
  if (!message->feed.empty()) feeding_.push_back(message);
  bool watched = false;
  for (StripeLink* link : message->links) {
    ++link->split_messages;
    watched = watched || link->governor.adapts();
  }
  if (watched) {
    join_crowd(message->links.front()->destination);
    // The acknowledgements as the last look saw them, not asked afresh: a split message then
    // costs no system call per stream (the rate it yields is a little high at first).
    message->pace.started = message->last_progress;
    for (const StripeLink* link : message->links) {
      message->pace.acknowledged_at_start += link->acknowledged;
    }
  }
  for (StripeStream* stream : message->streams) pump_(*stream);
}

bool StripedSender::take_piece(StripeStream& stream) {
  if (!takes_pieces(stream)) return false;
  for (auto it = feeding_.begin(); it != feeding_.end(); ++it) {
    const std::shared_ptr<StripedMessage> message = *it;
    const auto& streams = message->streams;
    if (std::find(streams.begin(), streams.end(), &stream) == streams.end()) continue;
    const auto piece = message->feed.next();  // a message in feeding_ has pieces left
    if (message->feed.empty()) feeding_.erase(it);
    FrameHeader header = message->header;
    header.flags |= piece->resent ? kFrameResent : 0;
    header.offset = piece->range.offset;
    header.length = piece->range.length;
    stream.out.push({.header = encode_frame_header(header),
                     .payload = message->of(piece->range),
                     .range = piece->range,
                     .message = message});
    ++message->frames_left;
    return true;
  }
  return false;
}

// The first governor.in_use() streams of the link that are not stalled; the stalled ones too
// when no stream of the link moves.
bool StripedSender::takes_pieces(const StripeStream& stream) const {
  const StripeLink& link = *stream.link;
  int position = 0;
  bool any_moves = false;
  for (const StripeStream* other : link.streams) {
    if (other->stalled || !other->open()) continue;
    any_moves = true;
    if (other == &stream) return position < streams_taking_pieces(link);
    ++position;
  }
  return !any_moves;
}

int StripedSender::streams_taking_pieces(const StripeLink& link) const {
  const int in_use = link.governor.in_use();
  if (!link.governor.adapts() || crowd_ < 2) return in_use;
  return std::max(1, (in_use + crowd_ - 1) / crowd_);
}

std::shared_ptr<StripedMessage> StripedSender::written(StripeStream& stream, std::size_t bytes) {
  // An interrupt that came when the frame had gone whole: its share goes again all the same.
  bool too_late = false;
  StripeOutbox::Frame frame = stream.out.wrote_front(bytes, too_late);
  if (frame.rest) return nullptr;
  std::shared_ptr<StripedMessage> message = std::move(frame.message);
  if (message->resends) stream.out.record(frame.range, message);
  message->handed_over += frame.range.length;
  message->last_progress = Clock::now();
  --message->frames_left;
  if (too_late) resend_share(stream, message, {});
  const bool pieces_left = message->split && !message->feed.empty();
  if (message->frames_left > 0 || pieces_left || resend_stalled_shares(message)) return nullptr;
  return message;
}

void StripedSender::forget(const std::shared_ptr<StripedMessage>& message) {
  if (message->finished) return;
  message->finished = true;
  messages_.remove(message);
  feeding_.remove(message);
  if (!message->split) return;
  for (StripeStream* stream : message->streams) {
    stream->out.forget([&](const StripeOutbox::Written& w) { return w.message == message; });
  }
  bool watched = false;
  for (StripeLink* link : message->links) {
    --link->split_messages;
    watched = watched || link->governor.adapts();
  }
  if (watched) leave_crowd(message->links.front()->destination);
}

void StripedSender::join_crowd(int destination) {
  const auto at = static_cast<std::size_t>(destination);
  if (at >= messages_to_.size()) messages_to_.resize(at + 1, 0);
  if (messages_to_[at]++ == 0) ++crowd_;
}

void StripedSender::leave_crowd(int destination) {
  if (--messages_to_[static_cast<std::size_t>(destination)] == 0) --crowd_;
}

void StripedSender::report_done(const StripedMessage& message) const {
  const auto now = Clock::now();
  for (StripeLink* link : message.links) {
    if (!link->governor.adapts()) continue;
    PathSample path = link->path;
    path.delivered_rate = message.pace.message_rate(now, message.size());
    link->governor.message_done(message.stalled, path);
  }
}

}  // namespace multilane::runtime
