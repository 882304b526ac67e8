// runtime/streams/stream_set_lifecycle.cpp — StreamSet: construction, failure, bounded waits and
// their timeout errors, closing and lingering.
#include "runtime/streams/stream_set_impl.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>

#include "multilane/errors.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

namespace {

// Longest wait for a peer that re-sends to close too (see linger()).
constexpr auto kLinger = std::chrono::seconds(3);

}  // namespace

StreamSet::Impl::Impl(std::shared_ptr<asio::io_context> context,
                      std::vector<asio::ip::tcp::socket> sockets, const StreamOptions& set_options)
    : io(std::move(context)),
      options(set_options),
      sender([this](StripeStream& s) { pump(static_cast<Stream&>(s)); },
             set_options.progress_probe) {
  if (sockets.empty()) throw UsageError("a stream set needs at least one connected socket");
  streams.reserve(sockets.size());  // handlers keep references to the streams
  for (auto& socket : sockets) streams.emplace_back(std::move(socket), *this);
  peer = streams.front().name;
  link = StripeLink(static_cast<int>(streams.size()), governed());
  for (Stream& s : streams) {
    s.link = &link;
    s.index = static_cast<int>(link.streams.size());
    link.streams.push_back(&s);
  }
  // Readers run from the start, so a peer's early data or close is seen at the next call.
  start_readers();
}

StreamSet::Impl::~Impl() {
  if (!io) return;
  settle_before_closing();
  if (!failure && peer_resends) linger();
  abandon();
}

void StreamSet::Impl::fail(Failure reason) {
  if (failure) return;
  failure = std::move(reason);
  for (Stream& s : streams) {
    asio::error_code ignored;
    s.socket.close(ignored);
  }
  if (probe_timer) probe_timer->cancel();
}

bool StreamSet::Impl::idle() const {
  if (probing) return false;
  for (const Stream& s : streams) {
    if (s.reader->busy() || s.out.writing()) return false;
  }
  return true;
}

// Drives the io_context until the posted operations completed, failing the set on timeout.
void StreamSet::Impl::await() {
  if (!run_until(*io, Clock::now() + options.timeout,
                 [this] { return send_done() && recv_done(); })) {
    fail(timed_out());
  }
}

// After a failure: lets the aborted handlers run (they still refer to the buffers), then
// throws the failure.
void StreamSet::Impl::throw_failure() {
  drain(*io, [this] { return idle(); });
  send = Send{};
  receive.active = false;
  throw TransportError(failure->kind, failure->text);
}

// Closes the streams and waits for every handler, so that neither the caller's buffers nor
// this object are referred to afterwards (the context may be shared and outlive the set).
void StreamSet::Impl::abandon() {
  for (Stream& s : streams) {
    asio::error_code ignored;
    s.socket.close(ignored);
  }
  if (probe_timer) probe_timer->cancel();
  drain(*io, [this] { return idle(); });
  send = Send{};
  receive.active = false;
}

// A peer that re-sends stalled streams' shares may still be writing copies nobody needs
// when this end is done, and may be waiting for their acknowledgement. Closing a socket with
// unread data resets the connection, which the peer would report as an error, so this end
// first says it is done (shuts down its sending side) and reads and drops what comes until
// the peer closes too, for at most a few seconds.
void StreamSet::Impl::linger() {
  closing = true;
  for (Stream& s : streams) {
    asio::error_code ignored;
    s.socket.shutdown(asio::ip::tcp::socket::shutdown_send, ignored);
    // place() drops every frame now, a parked one too.
    if (s.reader->parked()) {
      s.reader->resume();
    } else if (!s.closed) {
      s.reader->start();
    }
  }
  const auto until = Clock::now() + std::min<Clock::duration>(options.timeout, kLinger);
  run_until(*io, until, [this] {
    return failure ||
           std::all_of(streams.begin(), streams.end(), [](const Stream& s) { return s.closed; });
  });
}

// Waits (bounded by the timeout) until the kept tail is acknowledged, so that closing the
// streams loses none of it.
void StreamSet::Impl::settle_before_closing() {
  if (failure || !tail) return;
  const std::uint64_t id = tail->header.message_id;
  if (!run_until(*io, Clock::now() + options.timeout, [this] { return failure || !tail; })) {
    fail({ErrorKind::timeout,
          fmt::format("timed out after {} waiting for the acknowledgement of message {} to {}",
                      seconds_text(options.timeout), id, peer)});
  }
}

Failure StreamSet::Impl::timed_out() const {
  std::string what;
  if (receive.active && !receive.complete) {
    what = fmt::format("waiting for message {} from {}: {}", receive.id, peer, received_text());
  }
  if (!send_done()) {
    const StripedMessage& message = *send.message;
    const std::uint64_t unacknowledged = tail ? tail->header.message_id : message.header.message_id;
    what += fmt::format("{}sending message {} to {}: {}{}", what.empty() ? "" : "; ",
                        message.header.message_id, peer, sent_text(),
                        message.all_handed_out()
                            ? fmt::format(", message {} not all acknowledged", unacknowledged)
                            : "");
  }
  return {ErrorKind::timeout,
          fmt::format("timed out after {} {}", seconds_text(options.timeout), what)};
}

void StreamSet::Impl::check_usable() const {
  if (failure) {
    throw TransportError(failure->kind, fmt::format("streams to {} are closed after an error: {}",
                                                    peer, failure->text));
  }
}

}  // namespace multilane::runtime
