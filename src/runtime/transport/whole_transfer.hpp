// runtime/transport/whole_transfer.hpp — reading or writing a whole buffer in as few system calls
// as the kernel allows.
//
// asio::async_read / async_write offer the kernel at most 64 KiB per call; a 1 MiB chunk then
// costs 16 calls and as many trips through the event loop, which on a loaded machine shows as
// a several-fold loss against iperf3. These offer everything that is left on every call.
// The handler gets (error, bytes transferred) like asio's.
#pragma once

#include <array>
#include <asio.hpp>
#include <cstddef>
#include <span>
#include <utility>

namespace multilane::runtime {

template <typename Handler>
class ReadWhole {
 public:
  ReadWhole(asio::ip::tcp::socket& socket, std::span<std::byte> bytes, Handler handler)
      : socket_(socket), bytes_(bytes), handler_(std::move(handler)) {}
  void start() { next(); }
  void operator()(const asio::error_code& error, std::size_t transferred) {
    done_ += transferred;
    if (error || done_ == bytes_.size()) return handler_(error, done_);
    next();
  }

 private:
  void next() {
    socket_.async_read_some(asio::buffer(bytes_.data() + done_, bytes_.size() - done_),
                            std::move(*this));
  }
  asio::ip::tcp::socket& socket_;
  std::span<std::byte> bytes_;
  Handler handler_;
  std::size_t done_ = 0;
};

template <typename Handler>
void read_whole(asio::ip::tcp::socket& socket, std::span<std::byte> bytes, Handler handler) {
  ReadWhole<Handler>(socket, bytes, std::move(handler)).start();
}

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
          asio::buffer(body_.data(), body_.size())};
      socket_.async_write_some(buffers, std::move(*this));
    } else {
      const std::size_t offset = done_ - head_.size();
      socket_.async_write_some(asio::buffer(body_.data() + offset, body_.size() - offset),
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
