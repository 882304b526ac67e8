// runtime/tcp/frame_writer.hpp — writing one frame (a header and its payload) to a TCP
// socket, shared by the Engine's streams, StreamSet's streams and the routers' chunk links
// (FrameReader reads the other end).
//
// write_frame() writes `head` then `body` with one gathering async_write_some at a time and
// calls the handler once with (error, bytes written) like asio::async_write. The caller keeps
// the socket and both spans alive until then; a socket writes one frame at a time.
//
// Each call offers the kernel at most kLargestWrite bytes, so a large frame costs few calls, and
// one of a megabyte or less leaves in a single one. A smaller first call, to wake the peer's
// reader while the rest is still being copied, costs more than it overlaps (a 1 MiB ping-pong
// on loopback is slower with it, while a stream's throughput stays the same; the reader
// acknowledges large payloads at once, frame_reader.hpp). (asio::async_write offers at most 64
// KiB per call, which costs a trip through the event loop per 64 KiB.)
//
// write_frame_now() is the synchronous start for a caller that would otherwise wait for the
// write's handler: it writes what the kernel takes at once and returns the count, and the
// caller hands only the rest to write_frame(). A small message then leaves and completes within
// the sender's call, without a trip through the event loop. A frame of up to kCopiedFrame bytes
// is copied together and written with send(), which costs less than sendmsg() with two parts
// for a stream of small frames.
//
// Cancellation: a cancellation slot bound to the handler (asio::bind_cancellation_slot) stops
// the write on a terminal or partial cancellation. The handler then gets operation_aborted and
// exactly the bytes that went to the kernel, so the caller can send the rest elsewhere. A
// cancellation that comes when the last call has written the whole frame is too late: the
// handler gets success.
#pragma once

#include <sys/socket.h>

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <cstddef>
#include <span>
#include <utility>

namespace multilane::runtime {

inline constexpr std::size_t kLargestWrite = 1024 * 1024;

// One write_frame() in flight: moved into each call as its handler.
template <typename Handler>
class FrameWrite {
 public:
  FrameWrite(asio::ip::tcp::socket& socket, std::span<const std::byte> head,
             std::span<const std::byte> body, Handler handler)
      : socket_(socket),
        head_(head),
        body_(body),
        handler_(std::move(handler)),
        cancel_(asio::get_associated_cancellation_slot(handler_),
                asio::enable_partial_cancellation()) {}

  void start() { next(); }

  void operator()(const asio::error_code& error, std::size_t transferred) {
    done_ += transferred;
    if (error || done_ == head_.size() + body_.size()) return std::move(handler_)(error, done_);
    // The signal may come after a call wrote its bytes and before this handler ran; the call
    // then succeeded, and the write stops here.
    if (cancel_.cancelled() != asio::cancellation_type::none) {
      return std::move(handler_)(asio::error_code(asio::error::operation_aborted), done_);
    }
    next();
  }

 private:
  void next() {
    const std::size_t head_at = std::min(done_, head_.size());
    const std::size_t from_head = std::min(head_.size() - head_at, kLargestWrite);
    const std::size_t body_at = done_ - head_at;
    const std::size_t from_body = std::min(body_.size() - body_at, kLargestWrite - from_head);
    const std::array<asio::const_buffer, 2> buffers{
        asio::buffer(head_.data() + head_at, from_head),
        asio::buffer(body_.data() + body_at, from_body)};
    const asio::cancellation_slot slot = cancel_.slot();  // read before *this moves
    socket_.async_write_some(buffers, asio::bind_cancellation_slot(slot, std::move(*this)));
  }

  asio::ip::tcp::socket& socket_;
  std::span<const std::byte> head_;
  std::span<const std::byte> body_;
  Handler handler_;
  asio::cancellation_state cancel_;
  std::size_t done_ = 0;
};

// The bytes of `head` then `body` that the kernel took at once (at most kLargestWrite); 0 when
// its buffer is full, and 0 on an error, which the asynchronous write of the rest then reports.
inline std::size_t write_frame_now(asio::ip::tcp::socket& socket, std::span<const std::byte> head,
                                   std::span<const std::byte> body) {
  constexpr std::size_t kCopiedFrame = 1088;  // a header and 1 KiB
  if (head.size() + body.size() <= kCopiedFrame) {
    std::array<std::byte, kCopiedFrame> frame;
    std::copy(body.begin(), body.end(), std::copy(head.begin(), head.end(), frame.begin()));
    const ssize_t sent = ::send(socket.native_handle(), frame.data(), head.size() + body.size(),
                                MSG_DONTWAIT | MSG_NOSIGNAL);
    return sent > 0 ? static_cast<std::size_t>(sent) : 0;
  }
  const std::size_t from_head = std::min(head.size(), kLargestWrite);
  const std::size_t from_body = std::min(body.size(), kLargestWrite - from_head);
  std::array<iovec, 2> parts{iovec{const_cast<std::byte*>(head.data()), from_head},
                             iovec{const_cast<std::byte*>(body.data()), from_body}};
  msghdr message{};
  message.msg_iov = parts.data();
  message.msg_iovlen = parts.size();
  const ssize_t sent = ::sendmsg(socket.native_handle(), &message, MSG_DONTWAIT | MSG_NOSIGNAL);
  return sent > 0 ? static_cast<std::size_t>(sent) : 0;
}

template <typename Handler>
void write_frame(asio::ip::tcp::socket& socket, std::span<const std::byte> head,
                 std::span<const std::byte> body, Handler handler) {
  FrameWrite<Handler>(socket, head, body, std::move(handler)).start();
}

}  // namespace multilane::runtime
