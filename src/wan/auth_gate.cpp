// wan/auth_gate.cpp — accept on the loop, authenticate on workers (see auth_gate.hpp).
#include "wan/auth_gate.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::wan {

namespace {

asio::ip::tcp::acceptor listening(asio::io_context& loop, const GateOptions& options) {
  asio::ip::tcp::acceptor acceptor(loop);
  acceptor.open(options.listen.protocol());
  acceptor.set_option(asio::socket_base::reuse_address(true));
  if (options.send_buffer > 0) {
    acceptor.set_option(asio::socket_base::send_buffer_size(options.send_buffer));
  }
  if (options.receive_buffer > 0) {
    acceptor.set_option(asio::socket_base::receive_buffer_size(options.receive_buffer));
  }
  acceptor.bind(options.listen);
  acceptor.listen();
  return acceptor;
}

}  // namespace

AuthGate::AuthGate(asio::io_context& loop, const GateOptions& options, Admitted admitted,
                   Refused refused)
    : loop_(loop),
      options_(options),
      admitted_(std::move(admitted)),
      refused_(std::move(refused)),
      acceptor_(listening(loop, options), workers_,
                {.handshake = [this](const std::string& peer) { return admission(peer); },
                 .dropped = [this](const std::string& peer,
                                   const std::string& why) { refused_(peer, why); },
                 .abandoned = {},
                 .accept_failed = {},
                 .max_pending = options.max_pending}) {}

AuthGate::~AuthGate() {
  stop();
}

std::uint16_t AuthGate::port() const {
  return acceptor_.local_endpoint().port();
}

void AuthGate::start() {
  acceptor_.start();
}

runtime::AcceptedHandshake AuthGate::admission(const std::string& peer) {
  const auto deadline = std::make_shared<runtime::Clock::time_point>();
  return {.config =
              [this, deadline] {
                *deadline = runtime::Clock::now() + options_.handshake_timeout;
                return runtime::HandshakeConfig{.job_id = options_.job_id,
                                                .secret = options_.secret,
                                                .timeout = options_.handshake_timeout,
                                                .relay = options_.relay};
              },
          .passed =
              [this, deadline](asio::io_context& io, asio::ip::tcp::socket connection,
                               const runtime::PeerHello& hello) {
                // `admitted` watches what it blocks on from here.
                admitted_(io, std::move(connection), hello.identity, *deadline);
              },
          .refused =
              [this, peer](const std::exception& e) {
                asio::post(loop_, [this, peer, reason = std::string(e.what())] {
                  refused_(peer, reason);
                });
              }};
}

void AuthGate::watch(int fd) {
  workers_.watch(fd);
}

void AuthGate::unwatch(int fd) {
  workers_.unwatch(fd);
}

asio::ip::tcp::socket AuthGate::hand_over(int fd) {
  asio::ip::tcp::socket socket(loop_);
  socket.assign(options_.listen.protocol(), fd);
  return socket;
}

void AuthGate::stop() {
  {
    std::lock_guard lock(mutex_);
    if (!stopping_) {
      stopping_ = true;
      acceptor_.stop();
    }
  }
  workers_.stop();  // shuts the watched sockets, joins
}

}  // namespace multilane::wan
