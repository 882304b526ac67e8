// wan/splice.cpp — byte forwarding between two sockets (see splice.hpp).
#include "wan/splice.hpp"

#include <netinet/in.h>
#include <netinet/tcp.h>

namespace multilane::wan {

namespace {

// Probes after 60 s of silence, every 10 s, 6 times: a vanished peer is noticed in 2 minutes.
void keep_alive(asio::ip::tcp::socket& socket) {
  asio::error_code ignored;
  socket.set_option(asio::socket_base::keep_alive(true), ignored);
  const int idle = 60, interval = 10, count = 6;
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPIDLE, &idle, sizeof idle);
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPINTVL, &interval, sizeof interval);
  ::setsockopt(socket.native_handle(), IPPROTO_TCP, TCP_KEEPCNT, &count, sizeof count);
}

}  // namespace

Splice::Splice(asio::ip::tcp::socket first, asio::ip::tcp::socket second, std::size_t buffer_size,
               std::atomic<std::uint64_t>& forward_counter,
               std::atomic<std::uint64_t>& backward_counter, Ended ended)
    : first_(std::move(first)), second_(std::move(second)), ended_(std::move(ended)) {
  auto join = [buffer_size](Half& half, asio::ip::tcp::socket& from, asio::ip::tcp::socket& to,
                            std::atomic<std::uint64_t>& counter) {
    half.from = &from;
    half.to = &to;
    half.buffer.resize(buffer_size);
    half.counter = &counter;
  };
  join(forward_, first_, second_, forward_counter);
  join(backward_, second_, first_, backward_counter);
  keep_alive(first_);
  keep_alive(second_);
}

void Splice::start() {
  pump(forward_);
  pump(backward_);
}

void Splice::pump(Half& half) {
  half.from->async_read_some(
      asio::buffer(half.buffer),
      [self = shared_from_this(), &half](const asio::error_code& ec, std::size_t n) {
        if (ec) return self->half_ended(half, ec);
        asio::async_write(*half.to, asio::buffer(half.buffer.data(), n),
                          [self, &half](const asio::error_code& write_error, std::size_t written) {
                            if (write_error) return self->finish(false);
                            half.bytes += written;
                            *half.counter += written;
                            self->pump(half);
                          });
      });
}

void Splice::half_ended(Half& half, const asio::error_code& error) {
  if (error != asio::error::eof) return finish(false);
  half.done = true;
  asio::error_code ignored;
  half.to->shutdown(asio::socket_base::shutdown_send, ignored);
  if (forward_.done && backward_.done) finish(true);
}

void Splice::close() {
  finish(false);
}

void Splice::finish(bool clean) {
  if (finished_) return;
  finished_ = true;
  asio::error_code ignored;
  first_.close(ignored);
  second_.close(ignored);
  if (ended_) ended_({forward_.bytes, backward_.bytes, clean});
}

}  // namespace multilane::wan
