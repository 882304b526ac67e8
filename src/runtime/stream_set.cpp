// runtime/stream_set.cpp — striped sends and in-place receives over K streams (see
// stream_set.hpp).
//
// Every stream has one persistent reader: read a header, then read the chunk's bytes into the
// posted buffer at the header's offset, then read the next header. A header that belongs to a
// later message (the streams run ahead of each other) is parked on its stream until the
// receive of that message is posted. Readers keep running between calls, so no bytes are
// ever half-consumed; the io_context is only driven inside calls, by the calling thread.
#include "runtime/stream_set.hpp"

#include <fmt/format.h>

#include <array>
#include <optional>

#include "multilane/errors.hpp"
#include "runtime/io_wait.hpp"
#include "runtime/transport_error.hpp"
#include "runtime/wire.hpp"

namespace multilane::runtime {

namespace {

struct Stream {
  explicit Stream(asio::ip::tcp::socket s) : socket(std::move(s)), name(peer_name(socket)) {}
  asio::ip::tcp::socket socket;
  std::string name;
  // Receiving.
  FrameBytes header_in{};
  std::optional<FrameHeader> parked;  // header of a later message
  bool reading = false;               // a read is outstanding
  bool closed = false;                // the peer closed this stream between frames
  // Sending: this stream's chunks of the current message, written one after another.
  std::vector<Chunk> chunks;
  std::size_t next_chunk = 0;
  FrameBytes header_out{};
  bool writing = false;
};

struct Receive {
  bool active = false;
  std::uint64_t id = 0;
  std::uint64_t sequence = 0;
  std::span<std::byte> buffer;
  ReceiveSize size = ReceiveSize::Exact;
  std::optional<std::uint64_t> total;  // the message's length, once known
  std::uint64_t received = 0;
  bool complete = false;
};

struct Send {
  bool active = false;
  std::uint64_t id = 0;
  std::uint64_t sequence = 0;
  std::span<const std::byte> message;
  std::uint64_t sent = 0;
  int busy_streams = 0;
};

}  // namespace

struct StreamSet::Impl {
  std::shared_ptr<asio::io_context> io;
  std::vector<Stream> streams;
  StreamOptions options;
  std::string peer;
  Receive receive;
  Send send;
  std::uint64_t next_send_id = 0;
  std::uint64_t next_recv_id = 0;
  std::string failure;         // set once broken
  bool ended_by_peer = false;  // broken because the peer closed every stream between messages
  bool peer_gone = false;      // broken because the peer closed or reset a stream

  // --- receiving ---

  void read_header(Stream& s) {
    s.reading = true;
    asio::async_read(s.socket, asio::buffer(s.header_in),
                     [this, &s](const asio::error_code& ec, std::size_t n) {
                       s.reading = false;
                       if (ec) return read_failed(s, ec, n == 0);
                       on_header(s);
                     });
  }

  void on_header(Stream& s) {
    FrameDecode decoded =
        decode_frame_header(s.header_in, FrameCheck{options.job_id, options.max_message}, s.name);
    if (!decoded.header) return fail(decoded.error);
    if (!receive.active || decoded.header->message_id > receive.id) {
      s.parked = decoded.header;  // the streams ran ahead: keep it for its receive
      return;
    }
    take_frame(s, *decoded.header);
  }

  void take_frame(Stream& s, const FrameHeader& h) {
    if (h.message_id != receive.id) {
      return fail(fmt::format("stream from {} sent message {} again while message {} is awaited",
                              s.name, h.message_id, receive.id));
    }
    if (h.sequence != receive.sequence) {
      return fail(fmt::format("message {} from {} belongs to collective call {}, expected {}",
                              h.message_id, s.name, h.sequence, receive.sequence));
    }
    if (auto problem = length_problem(h); !problem.empty()) return fail(std::move(problem));
    receive.total = h.total;
    if (h.length == 0) return frame_arrived(s, 0);
    s.reading = true;
    asio::async_read(s.socket, asio::buffer(receive.buffer.data() + h.offset, h.length),
                     [this, &s](const asio::error_code& ec, std::size_t n) {
                       s.reading = false;
                       if (ec) {
                         receive.received += n;  // so the error tells how far it got
                         return read_failed(s, ec, false);
                       }
                       frame_arrived(s, n);
                     });
  }

  // What is wrong with the message length a frame announces, or "".
  std::string length_problem(const FrameHeader& h) const {
    if (receive.size == ReceiveSize::Exact && h.total != receive.buffer.size()) {
      return fmt::format("message {} from {} has {} bytes, the receive buffer {}", h.message_id,
                         peer, h.total, receive.buffer.size());
    }
    if (h.total > receive.buffer.size()) {
      return fmt::format("message {} from {} has {} bytes, more than the receive limit of {}",
                         h.message_id, peer, h.total, receive.buffer.size());
    }
    if (receive.total && *receive.total != h.total) {
      return fmt::format("frames of message {} from {} disagree on its length ({} and {} bytes)",
                         h.message_id, peer, *receive.total, h.total);
    }
    return {};
  }

  void frame_arrived(Stream& s, std::uint64_t bytes) {
    receive.received += bytes;
    if (receive.total && receive.received >= *receive.total) receive.complete = true;
    read_header(s);
  }

  // `between_frames`: the stream ended cleanly before a header, not inside a frame.
  void read_failed(Stream& s, const asio::error_code& ec, bool between_frames) {
    if (!failure.empty() || ec == asio::error::operation_aborted) return;
    if (!is_peer_gone(ec)) {
      return fail(fmt::format("receiving from {} failed: {}", s.name, ec.message()));
    }
    if (!between_frames) {
      peer_gone = true;
      return fail(fmt::format("peer {} closed the connection during message {} ({})", s.name,
                              receive.id, received_text()));
    }
    s.closed = true;
    check_all_closed();
  }

  // A peer may close streams it is done with; only when every stream is closed can a
  // posted receive no longer complete.
  void check_all_closed() {
    if (!receive.active || receive.complete) return;
    for (const Stream& s : streams) {
      if (!s.closed) return;
    }
    if (!failure.empty()) return;
    peer_gone = true;
    ended_by_peer = receive.received == 0 && !receive.total;
    fail(fmt::format("peer {} closed the connection before message {} was complete ({})", peer,
                     receive.id, received_text()));
  }

  void start_receive(std::span<std::byte> buffer, std::uint64_t sequence, ReceiveSize size) {
    if (receive.active) throw UsageError(fmt::format("a receive from {} is already posted", peer));
    receive = Receive{true, next_recv_id, sequence, buffer, size, std::nullopt, 0, false};
    if (size == ReceiveSize::Exact) receive.total = buffer.size();
    for (Stream& s : streams) {
      if (s.parked && s.parked->message_id <= receive.id) {
        const FrameHeader h = *s.parked;
        s.parked.reset();
        take_frame(s, h);  // an earlier id is refused there
      } else if (s.parked) {
        continue;  // this stream is already at a later message
      } else if (!s.reading && !s.closed) {
        read_header(s);
      }
      if (!failure.empty()) return;
    }
    check_all_closed();
  }

  std::string received_text() const {
    if (!receive.total) {
      return fmt::format("received {} bytes of a message of up to {}", receive.received,
                         receive.buffer.size());
    }
    return fmt::format("received {} of {} bytes", receive.received, *receive.total);
  }

  // --- sending ---

  void start_send(std::span<const std::byte> message, std::uint64_t sequence) {
    if (send.active) throw UsageError(fmt::format("a send to {} is already posted", peer));
    send = Send{true, next_send_id, sequence, message, 0, 0};
    const int k = static_cast<int>(streams.size());
    const auto chunks = plan_chunks(message.size(), k, options.stripe,
                                    static_cast<int>(send.id % static_cast<std::uint64_t>(k)));
    const std::uint16_t flags = chunks.size() > 1 ? kFrameStriped : 0;
    for (Stream& s : streams) {
      s.chunks.clear();
      s.next_chunk = 0;
    }
    for (const Chunk& c : chunks) streams[static_cast<std::size_t>(c.stream)].chunks.push_back(c);
    for (Stream& s : streams) {
      if (s.chunks.empty()) continue;
      ++send.busy_streams;
      write_next(s, flags);
    }
  }

  void write_next(Stream& s, std::uint16_t flags) {
    if (s.next_chunk == s.chunks.size()) {
      --send.busy_streams;
      return;
    }
    const Chunk& c = s.chunks[s.next_chunk++];
    s.header_out = encode_frame_header(FrameHeader{flags, options.job_id, send.sequence, send.id,
                                                   c.offset, c.length, send.message.size()});
    const std::array<asio::const_buffer, 2> parts{
        asio::buffer(s.header_out), asio::buffer(send.message.data() + c.offset, c.length)};
    s.writing = true;
    asio::async_write(
        s.socket, parts,
        [this, &s, flags, length = c.length](const asio::error_code& ec, std::size_t) {
          s.writing = false;
          if (ec) return write_failed(s, ec);
          send.sent += length;
          write_next(s, flags);
        });
  }

  void write_failed(Stream& s, const asio::error_code& ec) {
    if (!failure.empty() || ec == asio::error::operation_aborted) return;
    if (is_peer_gone(ec)) {
      peer_gone = true;
      return fail(fmt::format("peer {} closed the connection while message {} was sent ({})",
                              s.name, send.id, sent_text()));
    }
    fail(fmt::format("sending message {} to {} failed: {}", send.id, s.name, ec.message()));
  }

  std::string sent_text() const {
    return fmt::format("sent {} of {} bytes", send.sent, send.message.size());
  }

  // --- waiting and failing ---

  void fail(std::string message) {
    if (!failure.empty()) return;
    failure = std::move(message);
    for (Stream& s : streams) {
      asio::error_code ignored;
      s.socket.close(ignored);
    }
  }

  bool idle() const {
    for (const Stream& s : streams) {
      if (s.reading || s.writing) return false;
    }
    return true;
  }

  bool send_done() const { return !failure.empty() || !send.active || send.busy_streams == 0; }
  bool recv_done() const { return !failure.empty() || !receive.active || receive.complete; }

  // Drives the io_context until the posted operations completed, failing the set on timeout.
  void await() {
    if (!run_until(*io, Clock::now() + options.timeout,
                   [this] { return send_done() && recv_done(); })) {
      fail(timeout_text());
    }
  }

  // After a failure: lets the aborted handlers run (they still refer to the buffers), then
  // throws the failure.
  void throw_failure() {
    drain(*io, [this] { return idle(); });
    send.active = false;
    receive.active = false;
    throw TransportError(failure);
  }

  // Closes the streams and waits for every handler, so that neither the caller's buffers nor
  // this object are referred to afterwards (the context may be shared and outlive the set).
  void abandon() {
    for (Stream& s : streams) {
      asio::error_code ignored;
      s.socket.close(ignored);
    }
    drain(*io, [this] { return idle(); });
    send.active = false;
    receive.active = false;
  }

  ~Impl() {
    if (io) abandon();
  }

  void finish_send() {
    if (!failure.empty()) throw_failure();
    if (!send.active) return;
    ++next_send_id;
    send.active = false;
  }

  std::uint64_t finish_recv() {
    if (!failure.empty()) throw_failure();
    if (!receive.active) return 0;
    ++next_recv_id;
    receive.active = false;
    return receive.total.value_or(0);
  }

  std::string timeout_text() const {
    std::string what;
    if (receive.active && !receive.complete) {
      what = fmt::format("waiting for message {} from {}: {}", receive.id, peer, received_text());
    }
    if (send.active && send.busy_streams > 0) {
      what += fmt::format("{}sending message {} to {}: {}", what.empty() ? "" : "; ", send.id, peer,
                          sent_text());
    }
    return fmt::format("timed out after {} {}", seconds_text(options.timeout), what);
  }

  void check_usable() const {
    if (!failure.empty()) {
      throw TransportError(
          fmt::format("streams to {} are closed after an error: {}", peer, failure));
    }
  }
};

StreamSet::StreamSet(std::unique_ptr<asio::io_context> io,
                     std::vector<asio::ip::tcp::socket> sockets, const StreamOptions& options)
    : StreamSet(std::shared_ptr<asio::io_context>(std::move(io)), std::move(sockets), options) {}

StreamSet::StreamSet(std::shared_ptr<asio::io_context> io,
                     std::vector<asio::ip::tcp::socket> sockets, const StreamOptions& options)
    : impl_(std::make_unique<Impl>()) {
  if (sockets.empty()) throw UsageError("a stream set needs at least one connected socket");
  impl_->io = std::move(io);
  impl_->options = options;
  impl_->streams.reserve(sockets.size());  // handlers keep references to the streams
  for (auto& socket : sockets) impl_->streams.emplace_back(std::move(socket));
  impl_->peer = impl_->streams.front().name;
  // Readers run from the start, so a peer's early data or close is seen at the next call.
  for (Stream& s : impl_->streams) impl_->read_header(s);
}

StreamSet::StreamSet(StreamSet&&) noexcept = default;
StreamSet& StreamSet::operator=(StreamSet&&) noexcept = default;
StreamSet::~StreamSet() = default;

void StreamSet::send(std::span<const std::byte> message, std::uint64_t sequence) {
  start_send(message, sequence);
  impl_->await();
  finish_send();
}

void StreamSet::recv(std::span<std::byte> buffer, std::uint64_t sequence) {
  start_recv(buffer, sequence);
  impl_->await();
  finish_recv();
}

std::uint64_t StreamSet::recv_up_to(std::span<std::byte> buffer, std::uint64_t sequence) {
  start_recv(buffer, sequence, ReceiveSize::UpTo);
  impl_->await();
  return finish_recv();
}

void StreamSet::send_recv(std::span<const std::byte> message, std::span<std::byte> buffer,
                          std::uint64_t sequence) {
  start_recv(buffer, sequence);
  start_send(message, sequence);
  impl_->await();
  finish_send();
  finish_recv();
}

void StreamSet::start_send(std::span<const std::byte> message, std::uint64_t sequence) {
  impl_->check_usable();
  impl_->start_send(message, sequence);
}

void StreamSet::start_recv(std::span<std::byte> buffer, std::uint64_t sequence, ReceiveSize size) {
  impl_->check_usable();
  impl_->start_receive(buffer, sequence, size);
}

bool StreamSet::send_done() const {
  return impl_->send_done();
}
bool StreamSet::recv_done() const {
  return impl_->recv_done();
}
void StreamSet::finish_send() {
  impl_->finish_send();
}
std::uint64_t StreamSet::finish_recv() {
  return impl_->finish_recv();
}

std::uint64_t StreamSet::progress() const {
  return (impl_->send.active ? impl_->send.sent : 0) +
         (impl_->receive.active ? impl_->receive.received : 0);
}

void StreamSet::expire() {
  if (!impl_->send_done() || !impl_->recv_done()) impl_->fail(impl_->timeout_text());
}

void StreamSet::close() {
  impl_->fail(fmt::format("streams to {} were closed by this end", impl_->peer));
  impl_->abandon();
}

bool StreamSet::ended_by_peer() const {
  return impl_->ended_by_peer;
}
bool StreamSet::peer_gone() const {
  return impl_->peer_gone;
}
asio::io_context& StreamSet::context() {
  return *impl_->io;
}
std::chrono::milliseconds StreamSet::timeout() const {
  return impl_->options.timeout;
}

int StreamSet::streams() const {
  return static_cast<int>(impl_->streams.size());
}
const std::string& StreamSet::peer() const {
  return impl_->peer;
}

}  // namespace multilane::runtime
