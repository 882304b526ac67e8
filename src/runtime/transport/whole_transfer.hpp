// runtime/transport/whole_transfer.hpp — writing a whole frame in few system calls of a
// bounded size (FrameReader reads the other end).
//
// asio::async_write offers the kernel at most 64 KiB per call; a 1 MiB chunk then costs 16
// calls and as many trips through the event loop, which on a loaded machine shows as a
// several-fold loss against iperf3. One call of a whole megabyte is slow too: on loopback it
// halves the throughput of a ping-pong of 1 MiB (690-830 us a round trip against 330-400 us),
// since the peer's acknowledgements wait until the call returns. So every call offers up to
// kLargestWrite bytes. The handler gets (error, bytes transferred) like asio's.
#pragma once

#include <algorithm>
#include <array>
#include <asio.hpp>
#include <cstddef>
#include <span>
#include <utility>

namespace multilane::runtime {

inline constexpr std::size_t kLargestWrite = 256 * 1024;

// Writes `head` then `body` (a frame header and its payload) with one gathering call at a time.
template <typename Handler>
class WriteWhole {
 public:
  WriteWhole(asio::ip::tcp::socket& socket, std::span<const std::byte> head,
             std::span<const std::byte> body, Handler handler)
      : socket_(socket), head_(head), body_(body), handler_(std::move(handler)) {}
  void start() { next(); }
  void operator()(const asio::error_code& error, std::size_t transferred) {
    done_ += transferred;
    if (error || done_ == head_.size() + body_.size()) return handler_(error, done_);
    next();
  }

 private:
  void next() {
    if (done_ < head_.size()) {
      const std::array<asio::const_buffer, 2> buffers{
          asio::buffer(head_.data() + done_, head_.size() - done_),
          asio::buffer(body_.data(), std::min(body_.size(), kLargestWrite - head_.size()))};
      socket_.async_write_some(buffers, std::move(*this));
    } else {
      const std::size_t offset = done_ - head_.size();
      socket_.async_write_some(
          asio::buffer(body_.data() + offset, std::min(body_.size() - offset, kLargestWrite)),
          std::move(*this));
    }
  }
  asio::ip::tcp::socket& socket_;
  std::span<const std::byte> head_;
  std::span<const std::byte> body_;
  Handler handler_;
  std::size_t done_ = 0;
};

template <typename Handler>
void write_whole(asio::ip::tcp::socket& socket, std::span<const std::byte> head,
                 std::span<const std::byte> body, Handler handler) {
  WriteWhole<Handler>(socket, head, body, std::move(handler)).start();
}

}  // namespace multilane::runtime
