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
  std::unique_ptr<asio::io_context> io;
  std::vector<Stream> streams;
  StreamOptions options;
  std::string peer;
  Receive receive;
  Send send;
  std::uint64_t next_send_id = 0;
  std::uint64_t next_recv_id = 0;
  std::string failure;  // set once broken

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
    if (h.total != receive.buffer.size()) {
      return fail(fmt::format("message {} from {} has {} bytes, the receive buffer {}",
                              h.message_id, s.name, h.total, receive.buffer.size()));
    }
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

  void frame_arrived(Stream& s, std::uint64_t bytes) {
    receive.received += bytes;
    if (receive.received >= receive.buffer.size()) receive.complete = true;
    read_header(s);
  }

  // `between_frames`: the stream ended cleanly before a header, not inside a frame.
  void read_failed(Stream& s, const asio::error_code& ec, bool between_frames) {
    if (!failure.empty() || ec == asio::error::operation_aborted) return;
    if (!is_peer_gone(ec)) {
      return fail(fmt::format("receiving from {} failed: {}", s.name, ec.message()));
    }
    if (!between_frames) {
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
    fail(fmt::format("peer {} closed the connection before message {} was complete ({})", peer,
                     receive.id, received_text()));
  }

  void start_receive(std::span<std::byte> buffer, std::uint64_t sequence) {
    receive = Receive{true, next_recv_id, sequence, buffer, 0, false};
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
    return fmt::format("received {} of {} bytes", receive.received, receive.buffer.size());
  }

  // --- sending ---

  void start_send(std::span<const std::byte> message, std::uint64_t sequence) {
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

  // Drives the io_context until the started send and/or receive completed; throws on failure
  // or timeout, leaving no operation outstanding.
  void wait() {
    auto finished = [this] {
      const bool sent = !send.active || send.busy_streams == 0;
      const bool received = !receive.active || receive.complete;
      return !failure.empty() || (sent && received);
    };
    if (!run_until(*io, Clock::now() + options.timeout, finished)) fail(timeout_text());
    if (!failure.empty()) {
      drain(*io, [this] { return idle(); });  // aborted handlers still refer to the buffers
      throw TransportError(failure);
    }
    if (send.active) ++next_send_id;
    if (receive.active) ++next_recv_id;
    send.active = false;
    receive.active = false;
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
  impl_->check_usable();
  impl_->start_send(message, sequence);
  impl_->wait();
}

void StreamSet::recv(std::span<std::byte> buffer, std::uint64_t sequence) {
  impl_->check_usable();
  impl_->start_receive(buffer, sequence);
  impl_->wait();
}

void StreamSet::send_recv(std::span<const std::byte> message, std::span<std::byte> buffer,
                          std::uint64_t sequence) {
  impl_->check_usable();
  impl_->start_receive(buffer, sequence);
  impl_->start_send(message, sequence);
  impl_->wait();
}

int StreamSet::streams() const {
  return static_cast<int>(impl_->streams.size());
}
const std::string& StreamSet::peer() const {
  return impl_->peer;
}

}  // namespace multilane::runtime
