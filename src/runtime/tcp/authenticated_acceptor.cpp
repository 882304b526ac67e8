// runtime/tcp/authenticated_acceptor.cpp — see authenticated_acceptor.hpp.
#include "runtime/tcp/authenticated_acceptor.hpp"

#include <fmt/format.h>

#include "runtime/tcp/io_wait.hpp"

namespace multilane::runtime {

AuthenticatedAcceptor::AuthenticatedAcceptor(asio::ip::tcp::acceptor acceptor,
                                             WorkerThreads& workers, Handlers handlers)
    : acceptor_(std::move(acceptor)),
      retry_(acceptor_.get_executor()),
      workers_(workers),
      handlers_(std::move(handlers)) {}

void AuthenticatedAcceptor::start() {
  accept_next();
}

void AuthenticatedAcceptor::stop() {
  stopped_ = true;
  asio::error_code ignored;
  acceptor_.close(ignored);
  retry_.cancel();
}

void AuthenticatedAcceptor::resume() {
  if (!paused_ || stopped_) return;
  paused_ = false;
  accept_next();
}

void AuthenticatedAcceptor::accept_next() {
  if (handlers_.may_accept && !handlers_.may_accept()) {
    paused_ = true;
    return;
  }
  acceptor_.async_accept([this](const asio::error_code& error, asio::ip::tcp::socket socket) {
    if (stopped_ || error == asio::error::operation_aborted) return;
    if (error) {
      if (handlers_.accept_failed) {
        handlers_.accept_failed(
            fmt::format("accepting a connection failed: {}; retrying", error.message()));
      }
      retry_.expires_after(kRetryAfter);
      retry_.async_wait([this](const asio::error_code& e) {
        if (!e && !stopped_) accept_next();
      });
      return;
    }
    take(std::move(socket));
    accept_next();
  });
}

void AuthenticatedAcceptor::take(asio::ip::tcp::socket socket) {
  const std::string peer = peer_name(socket);
  if (handlers_.max_pending > 0) {
    if (const std::size_t running = workers_.reap();
        running >= static_cast<std::size_t>(handlers_.max_pending)) {
      if (handlers_.dropped) {
        handlers_.dropped(peer, fmt::format("{} handshakes are already under way", running));
      }
      return;
    }
  }
  // The handshake's small messages go out at once (a connection already gone fails it instead).
  asio::error_code ignored;
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  const bool started =
      authenticate_accepted(workers_, std::move(socket), handlers_.handshake(peer));
  if (!started && handlers_.abandoned) handlers_.abandoned();
}

}  // namespace multilane::runtime
