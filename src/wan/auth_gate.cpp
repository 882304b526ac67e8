// wan/auth_gate.cpp — accept on the loop, authenticate on workers (see auth_gate.hpp).
#include "wan/auth_gate.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include "runtime/tcp/accepted_handshake.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::wan {

AuthGate::AuthGate(asio::io_context& loop, const GateOptions& options, Admitted admitted,
                   Refused refused)
    : loop_(loop),
      options_(options),
      admitted_(std::move(admitted)),
      refused_(std::move(refused)),
      acceptor_(loop) {
  acceptor_.open(options.listen.protocol());
  acceptor_.set_option(asio::socket_base::reuse_address(true));
  if (options.send_buffer > 0) {
    acceptor_.set_option(asio::socket_base::send_buffer_size(options.send_buffer));
  }
  if (options.receive_buffer > 0) {
    acceptor_.set_option(asio::socket_base::receive_buffer_size(options.receive_buffer));
  }
  acceptor_.bind(options.listen);
  acceptor_.listen();
}

AuthGate::~AuthGate() {
  stop();
}

std::uint16_t AuthGate::port() const {
  return acceptor_.local_endpoint().port();
}

void AuthGate::start() {
  accept_next();
}

void AuthGate::accept_next() {
  acceptor_.async_accept([this](const asio::error_code& ec, asio::ip::tcp::socket socket) {
    if (ec == asio::error::operation_aborted) return;
    {
      std::lock_guard lock(mutex_);
      if (stopping_) return;
    }
    if (!ec) {
      const std::string peer = runtime::peer_name(socket);
      if (static_cast<int>(workers_.reap()) >= options_.max_pending) {
        refused_(peer, fmt::format("{} handshakes are already in progress", options_.max_pending));
      } else {
        admit(std::move(socket), peer);
      }
    }
    accept_next();
  });
}

void AuthGate::admit(asio::ip::tcp::socket socket, const std::string& peer) {
  asio::error_code ignored;  // a connection already gone fails its handshake instead
  socket.set_option(asio::ip::tcp::no_delay(true), ignored);
  const auto deadline = std::make_shared<runtime::Clock::time_point>();
  runtime::authenticate_accepted(
      workers_, std::move(socket),
      {.config =
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
             asio::post(loop_,
                        [this, peer, reason = std::string(e.what())] { refused_(peer, reason); });
           }});
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
      asio::error_code ignored;
      acceptor_.close(ignored);
    }
  }
  workers_.stop();  // shuts the watched sockets, joins
}

}  // namespace multilane::wan
