// runtime/streams/stream_set.cpp — StreamSet's calls; each part of the set is implemented in
// its own file (stream_set_impl.hpp lists them).
#include "runtime/streams/stream_set.hpp"

#include <fmt/format.h>

#include <utility>

#include "runtime/streams/stream_set_impl.hpp"

namespace multilane::runtime {

StreamSet::StreamSet(std::unique_ptr<asio::io_context> io,
                     std::vector<asio::ip::tcp::socket> sockets, const StreamOptions& options)
    : StreamSet(std::shared_ptr<asio::io_context>(std::move(io)), std::move(sockets), options) {}

StreamSet::StreamSet(std::shared_ptr<asio::io_context> io,
                     std::vector<asio::ip::tcp::socket> sockets, const StreamOptions& options)
    : impl_(std::make_unique<Impl>(std::move(io), std::move(sockets), options)) {}

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
  return (impl_->send.active ? impl_->send.message->handed_over : 0) +
         (impl_->receive.active ? impl_->receive.arrived.bytes() : 0);
}

void StreamSet::expire() {
  if (!impl_->send_done() || !impl_->recv_done()) impl_->fail(impl_->timed_out());
}

void StreamSet::close() {
  impl_->settle_before_closing();
  impl_->fail(
      {ErrorKind::usage, fmt::format("streams to {} were closed by this end", impl_->peer)});
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

SendCounters StreamSet::send_counters() const {
  SendCounters counters = impl_->counters;
  const StripeCounters stripes = impl_->sender.counters();
  counters.stalls = stripes.stalls;
  counters.resent_bytes = stripes.resent_bytes;
  counters.streams_in_use = impl_->link.governor.in_use();
  return counters;
}

int StreamSet::streams() const {
  return static_cast<int>(impl_->streams.size());
}
const std::string& StreamSet::peer() const {
  return impl_->peer;
}

}  // namespace multilane::runtime
