// runtime/transport/receive_side.cpp — matching incoming chunks to posted receives (see
// engine.hpp).
#include "runtime/transport/receive_side.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <utility>

#include "runtime/transport/call_space.hpp"
#include "runtime/transport/incoming_stream.hpp"

namespace multilane::runtime {

std::size_t ReceiveSide::KeyHash::operator()(const Key& k) const noexcept {
  std::size_t h = std::hash<std::uint64_t>{}(k.sequence * 0x9e3779b97f4a7c15ull + k.message_id);
  return h ^ (std::hash<int>{}(k.peer) << 1);
}

namespace {

constexpr std::size_t kRememberedMessages = std::size_t{1} << 16;

std::string message_text(const ReceiveSide::Key& key) {
  if (call_number(key.sequence) == 0) {
    return fmt::format("point-to-point message {}", key.message_id);
  }
  return fmt::format("message {} of call {}", key.message_id, call_label(key.sequence));
}

}  // namespace

ReceiveSide::ReceiveSide(EngineContext& context)
    : context_(context),
      open_streams_(context.config.size, 0),
      ever_connected_(context.config.size, 0),
      gone_(context.config.size),
      closed_while_handshaking_(context.config.size) {
  // The records of small messages, made up front: a loop of small calls then allocates none
  // even at a late peak of early arrivals (the keys only need to differ).
  const auto key_of = [](std::size_t i) { return Key{.peer = -1, .sequence = 0, .message_id = i}; };
  posted_nodes_.prefill(posted_, key_of, [](Posted& posted) { posted.readers.reserve(4); });
  early_nodes_.prefill(early_, key_of, [](Early& early) { early.chunks.reserve(4); });
  small_chunks_.reserve(kReusedSmallChunks);
  for (std::size_t i = 0; i < kReusedSmallChunks; ++i) {
    small_chunks_.push_back(std::make_shared<EarlyChunk>(0, 0));
  }
}

ReceiveSide::~ReceiveSide() = default;

void ReceiveSide::adopt(std::shared_ptr<Connection> connection, int peer, int lane, int stream,
                        bool opened_by_peer) {
  auto incoming = std::make_shared<IncomingStream>(*this, context_, std::move(connection), peer,
                                                   lane, stream, opened_by_peer, scratch_);
  streams_.push_back(incoming);
  ++open_streams_[peer];
  ever_connected_[peer] = 1;
  gone_[peer].reset();
  closed_while_handshaking_[peer].reset();
  incoming->start();
}

std::vector<std::shared_ptr<Connection>> ReceiveSide::peer_connections(int peer, int lane,
                                                                       int count) const {
  std::vector<std::shared_ptr<Connection>> found(count);
  for (int stream = 0; stream < count; ++stream) {
    found[stream] = peer_connection(peer, lane, stream);
    if (!found[stream]) return {};
  }
  return found;
}

std::shared_ptr<Connection> ReceiveSide::peer_connection(int peer, int lane, int stream) const {
  for (const auto& s : streams_) {
    const bool wanted = s->opened_by_peer() && s->peer() == peer && s->lane() == lane &&
                        s->stream() == stream && !s->is_closed();
    if (wanted) return s->connection();
  }
  return nullptr;
}

void ReceiveSide::close_connection(const Connection& connection, const Failure& reason) {
  const auto it = std::find_if(streams_.begin(), streams_.end(),
                               [&](const auto& s) { return s->connection().get() == &connection; });
  if (it == streams_.end()) return;
  const std::shared_ptr<IncomingStream> stream = *it;  // close() erases it from streams_
  stream->close(reason);
}

void ReceiveSide::handshake_ended() {
  if (--handshaking_ > 0) return;
  for (int peer = 0; peer < static_cast<int>(closed_while_handshaking_.size()); ++peer) {
    if (!closed_while_handshaking_[peer]) continue;
    const Failure reason = *std::exchange(closed_while_handshaking_[peer], std::nullopt);
    if (open_streams_[peer] == 0) peer_gone(peer, reason);
  }
}

void ReceiveSide::recv(RecvRequest request, Completion done) {
  const Key key{request.peer, request.key.sequence, request.key.message_id};
  const std::size_t posted_before = posted_.size();
  Posted& posted = posted_nodes_.at(posted_, key);
  if (posted_.size() > posted_before) ++context_.demand[key.peer].waiting;
  posted.request = std::move(request);
  posted.done = std::move(done);
  posted.last_progress = Clock::now();
  const std::span<std::byte> bytes = posted.request.bytes;
  if (auto early = early_.find(key); early != early_.end()) {
    if (early->second.total != bytes.size()) {
      return fail_posted(
          key, {ErrorKind::mismatch,
                fmt::format("rank {} sent {} bytes as {}, but the receive posted "
                            "here expects {} bytes",
                            key.peer, early->second.total, message_text(key), bytes.size())});
    }
    posted.split = early->second.split;
    auto& chunks = early->second.chunks;
    for (auto& chunk : chunks) {
      if (!chunk->arrived) continue;
      std::memcpy(bytes.data() + chunk->offset, chunk->bytes.data(), chunk->bytes.size());
      land(posted, chunk->offset, chunk->bytes.size());
      early_bytes_.release(chunk->bytes.size());
    }
    std::erase_if(chunks, [](const auto& chunk) { return chunk->arrived; });
    // Chunks still being read land in chunk_done().
    if (chunks.empty()) early_nodes_.erase(early_, early);
  }
  resume_parked(key);
  complete_if_whole(key);
  auto it = posted_.find(key);
  if (it == posted_.end()) return;  // complete, or a parked chunk was refused and failed it
  if (gone_[key.peer] && it->second.readers.empty()) fail_posted(key, *gone_[key.peer]);
}

ReceiveSide::Target ReceiveSide::place_chunk(IncomingStream& stream, const FrameHeader& header,
                                             std::shared_ptr<EarlyChunk>& early) {
  const Key key{stream.peer(), header.sequence, header.message_id};
  if (completed_.contains(key)) return Target::dropped();
  if (auto it = posted_.find(key); it != posted_.end()) {
    Posted& posted = it->second;
    if (header.total != posted.request.bytes.size()) {
      const Failure error{
          ErrorKind::mismatch,
          fmt::format("rank {} sent {} bytes as {}, but the receive posted here expects {} bytes",
                      key.peer, header.total, message_text(key), posted.request.bytes.size())};
      fail_posted(key, error);
      return Target::refused(error);
    }
    posted.readers.push_back(&stream);
    return Target::into(posted.request.bytes.subspan(header.offset, header.length));
  }
  Early& entry = early_nodes_.at(early_, key);
  if (!entry.chunks.empty() && entry.total != header.total) {
    return Target::refused(
        {ErrorKind::protocol, fmt::format("chunks of {} disagree on its length ({} and {} bytes)",
                                          message_text(key), entry.total, header.total)});
  }
  // Early chunks are kept only while small: a chunk larger than a striped message's chunks, or
  // a message sent whole above kEarlyWholeMessageMost, waits for its receive and is then read
  // in place, rather than costing a fresh buffer, its page faults and a copy. Its bytes wait in
  // the socket buffers meanwhile; a verified schedule never needs a later message of the same
  // pair first (verify/execution.hpp: synchronous, in order).
  const bool whole = (header.flags & kFrameStriped) == 0 && header.length == header.total;
  if (header.length > context_.config.stripe.max_chunk ||
      (whole && header.length > kEarlyWholeMessageMost) ||
      !early_bytes_.fits(header.length, context_.config.unexpected_budget)) {
    if (entry.chunks.empty()) early_nodes_.erase(early_, early_.find(key));
    parked_[key].push_back(&stream);
    return Target::parked();
  }
  entry.total = header.total;
  entry.signature = header.signature;
  entry.split = entry.split || (header.flags & kFrameStriped) != 0;
  early = new_early_chunk(header);
  entry.chunks.push_back(early);
  early_bytes_.hold(header.length);
  return Target::into(early->bytes);
}

void ReceiveSide::chunk_done(const Key& key, const FrameHeader& header, IncomingStream& stream,
                             std::shared_ptr<EarlyChunk> early) {
  auto posted = posted_.find(key);
  if (early) {
    early->arrived = true;
    // Stays early until the receive is posted; forgotten if it completed meanwhile.
    if (posted == posted_.end()) return;
    // The receive was posted while this chunk was being read: hand it over now.
    Posted& p = posted->second;
    std::memcpy(p.request.bytes.data() + early->offset, early->bytes.data(), early->bytes.size());
    early_bytes_.release(early->bytes.size());
    if (auto e = early_.find(key); e != early_.end()) {
      std::erase(e->second.chunks, early);
      if (e->second.chunks.empty()) early_nodes_.erase(early_, e);
    }
    land(p, early->offset, early->bytes.size());
  } else if (posted == posted_.end()) {
    return;  // the receive failed meanwhile
  } else {
    std::erase(posted->second.readers, &stream);
    land(posted->second, header.offset, header.length);
  }
  Posted& p = posted->second;
  p.split = p.split || (header.flags & kFrameStriped) != 0;
  p.last_progress = Clock::now();
  complete_if_whole(key);
}

void ReceiveSide::land(Posted& posted, std::uint64_t offset, std::uint64_t length) {
  posted.any_chunk = true;
  if (!posted.request.landed) return posted.arrived.add(offset, length);
  // Reported before they are added (add() would cover them); landed() only reads the buffer.
  posted.arrived.for_each_missing(offset, length, [&](const ByteRange& range) {
    posted.request.landed(range.offset, range.length);
  });
  posted.arrived.add(offset, length);
}

// Streams still reading into the buffer then carry copies of bytes that are in: they drop the
// rest, so the caller gets the buffer back now, not when a stalled stream moves again.
void ReceiveSide::complete_if_whole(const Key& key) {
  auto it = posted_.find(key);
  if (it == posted_.end()) return;
  Posted& p = it->second;
  if (!p.any_chunk || p.arrived.bytes() < p.request.bytes.size()) return;
  for (IncomingStream* reader : p.readers) reader->drop_rest();
  p.readers.clear();
  forget_pending_early(key);
  if (p.split) remember_completed(key);
  complete(key, kSucceeded);
}

// Early chunks of `key` still being read are copies: their streams read on into memory of their
// own, and the chunks are dropped when done (chunk_done finds no receive).
void ReceiveSide::forget_pending_early(const Key& key) {
  auto early = early_.find(key);
  if (early == early_.end()) return;
  for (const auto& chunk : early->second.chunks) early_bytes_.release(chunk->bytes.size());
  early_nodes_.erase(early_, early);
}

// At most kRememberedMessages keys, so that a stream of small split messages on a fast link
// costs a bounded memory (a few MiB) however long the timeout.
void ReceiveSide::remember_completed(const Key& key) {
  if (!completed_.insert(key).second) return;
  completed_order_.emplace_back(Clock::now(), key);
  if (completed_order_.size() <= kRememberedMessages) return;
  completed_.erase(completed_order_.front().second);
  completed_order_.pop_front();
}

// A late copy comes when its stalled stream moves again, which it does within the timeout
// or fails; twice the timeout leaves room for the copy to travel.
void ReceiveSide::forget_old_completed(Clock::time_point now) {
  const auto horizon = 2 * context_.config.timeout;
  while (!completed_order_.empty() && now - completed_order_.front().first >= horizon) {
    completed_.erase(completed_order_.front().second);
    completed_order_.pop_front();
  }
}

void ReceiveSide::resume_parked(const Key& key) {
  auto parked = parked_.find(key);
  if (parked == parked_.end()) return;
  std::vector<IncomingStream*> streams = std::move(parked->second);
  parked_.erase(parked);
  // The receive exists now, so each parked chunk goes straight into it.
  for (IncomingStream* stream : streams) stream->place_again();
}

void ReceiveSide::complete(const Key& key, const Outcome& outcome) {
  auto it = posted_.find(key);
  if (it == posted_.end()) return;
  Completion done = std::move(it->second.done);
  --context_.demand[key.peer].waiting;
  posted_nodes_.erase(posted_, it);
  if (done) done(outcome);
}

std::shared_ptr<ReceiveSide::EarlyChunk> ReceiveSide::new_early_chunk(const FrameHeader& header) {
  if (header.length > EarlyChunk::kInlineBytes) {
    return std::make_shared<EarlyChunk>(header.offset, header.length);
  }
  // Only the driving thread holds these records, so a count of 1 means nobody else does.
  for (const auto& chunk : small_chunks_) {
    if (chunk.use_count() == 1) {
      chunk->reuse(header.offset, header.length);
      return chunk;
    }
  }
  auto chunk = std::make_shared<EarlyChunk>(header.offset, header.length);
  if (small_chunks_.size() < kReusedSmallChunks) small_chunks_.push_back(chunk);
  return chunk;
}

ReceiveSide::EarlyChunk::EarlyChunk(std::uint64_t chunk_offset, std::size_t length)
    : offset(chunk_offset) {
  if (length <= kInlineBytes) {
    bytes = std::span(inline_bytes).first(length);
  } else {
    storage = std::make_unique_for_overwrite<std::byte[]>(length);
    bytes = {storage.get(), length};
  }
}

void ReceiveSide::EarlyChunk::reuse(std::uint64_t chunk_offset, std::size_t length) {
  offset = chunk_offset;
  bytes = std::span(inline_bytes).first(length);
  arrived = false;
}

void ReceiveSide::Early::reset() {
  total = 0;
  signature = 0;
  split = false;
  chunks.clear();
}

void ReceiveSide::Posted::reset() {
  request = {};
  arrived.clear();
  any_chunk = false;
  split = false;
  readers.clear();
}

void ReceiveSide::fail_posted(const Key& key, const Failure& error) {
  auto it = posted_.find(key);
  if (it == posted_.end()) return;
  // No byte may land in the buffer once its owner heard of the failure.
  std::vector<IncomingStream*> readers = std::move(it->second.readers);
  it->second.readers.clear();
  complete(key, error);
  for (IncomingStream* reader : readers) reader->close(error);
}

void ReceiveSide::stream_closed(IncomingStream& stream, const Failure& reason) {
  const int peer = stream.peer();
  for (auto& [key, streams] : parked_) std::erase(streams, &stream);
  std::vector<Key> broken;
  for (auto& [key, posted] : posted_) {
    if (std::erase(posted.readers, &stream) > 0) broken.push_back(key);
  }
  for (const Key& key : broken) fail_posted(key, reason);
  auto it = std::find_if(streams_.begin(), streams_.end(),
                         [&](const auto& s) { return s.get() == &stream; });
  if (it != streams_.end()) {
    // Destroyed later: the stream may be in the middle of one of its own member functions.
    asio::post(context_.io, [keep = std::move(*it)] {});
    streams_.erase(it);
  }
  if (--open_streams_[peer] > 0) return;
  last_stream_closed(peer, reason);
}

void ReceiveSide::last_stream_closed(int peer, const Failure& reason) {
  if (handshaking_ > 0) {
    closed_while_handshaking_[peer] = reason;  // decided when the handshakes end
    return;
  }
  peer_gone(peer, reason);
}

void ReceiveSide::peer_gone(int peer, const Failure& reason) {
  gone_[peer] = reason;
  std::vector<Key> orphaned;
  for (auto& [key, posted] : posted_) {
    if (key.peer == peer && posted.readers.empty()) orphaned.push_back(key);
  }
  for (const Key& key : orphaned) fail_posted(key, reason);
}

Failure ReceiveSide::timed_out(const Key& key, const Posted& posted) const {
  std::string text =
      fmt::format("timed out after {} waiting for rank {} ({}): received {}",
                  seconds_text(context_.config.timeout), key.peer, message_text(key),
                  progress_text(posted.arrived.bytes(), posted.request.bytes.size()));
  if (!ever_connected_[key.peer]) {
    text += fmt::format("; rank {} never connected to this rank", key.peer);
  }
  return {ErrorKind::timeout, std::move(text)};
}

void ReceiveSide::check_timeouts(Clock::time_point now) {
  forget_old_completed(now);
  std::vector<std::pair<Key, Failure>> expired;
  for (const auto& [key, posted] : posted_) {
    if (now - posted.last_progress >= context_.config.timeout) {
      expired.emplace_back(key, timed_out(key, posted));
    }
  }
  for (const auto& [key, failure] : expired) fail_posted(key, failure);
}

void ReceiveSide::abandon_call(std::uint64_t sequence) {
  std::vector<Key> keys;
  for (const auto& [key, posted] : posted_) {
    if (key.sequence == sequence) keys.push_back(key);
  }
  for (const Key& key : keys) fail_posted(key, {ErrorKind::internal, "abandoned"});
}

}  // namespace multilane::runtime
