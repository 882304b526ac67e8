// tests/runtime/pausing_proxy.hpp — a TCP forwarder on 127.0.0.1 that can hold one connection.
//
// Stands in for a network path on which one TCP stream stalls: while a connection is paused,
// the proxy stops reading it, so what the sender writes piles up in the proxy's (small)
// socket buffer and then in the sender's. The sender's kernel sees those bytes acknowledged by
// the proxy, so `progress()` reports what a real stalled path would: bytes count as
// acknowledged only once forwarded, and bytes the proxy holds as unacknowledged.
//
// Every connection gets two pump threads; the destructor shuts the sockets down and joins
// them, so a failing test leaves nothing behind.
#pragma once

#include <poll.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include <asio.hpp>
#include <cerrno>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <vector>

#include "loopback.hpp"
#include "runtime/tcp/stream_progress.hpp"

namespace multilane::runtime::testing {

class PausingProxy {
 public:
  // Forwards every connection to 127.0.0.1:`target_port`; `buffer` bytes of socket buffer.
  PausingProxy(std::uint16_t target_port, int buffer) : target_port_(target_port) {
    acceptor_.open(asio::ip::tcp::v4());
    acceptor_.set_option(asio::socket_base::receive_buffer_size(buffer));
    acceptor_.bind(loopback(0));
    acceptor_.listen();
    acceptor_thread_ = std::thread([this] { accept_loop(); });
  }
  ~PausingProxy() {
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    ::shutdown(acceptor_.native_handle(), SHUT_RDWR);
    acceptor_thread_.join();
    // Only this thread changes the list now; the pumps take the lock while paused, so it is
    // not held while joining them.
    for (auto& c : connections_) {
      ::shutdown(c->from.native_handle(), SHUT_RDWR);
      ::shutdown(c->to.native_handle(), SHUT_RDWR);
    }
    for (auto& c : connections_) {
      c->up.join();
      c->down.join();
    }
  }
  std::uint16_t port() const { return acceptor_.local_endpoint().port(); }

  // Stops / restarts forwarding the `index`-th accepted connection towards the target.
  void pause(std::size_t index) { set_paused(index, true); }
  // The `index`-th connection, when it comes, forwards its first `bytes` bytes towards the
  // target and then pauses (e.g. a handshake's first message, and not the second).
  void pause_after(std::size_t index, std::uint64_t bytes) {
    std::lock_guard lock(mutex_);
    pause_after_[index] = bytes;
  }
  void resume(std::size_t index) { set_paused(index, false); }
  // The `index`-th connection, already open, forwards `bytes` more towards the target and then
  // pauses.
  void pause_after_more(std::size_t index, std::uint64_t bytes) {
    std::lock_guard lock(mutex_);
    Connection& c = *connections_.at(index);
    c.pause_after = c.forwarded + bytes;
  }
  // Whether the sender's socket `fd` is the `index`-th connection.
  bool carries(std::size_t index, int fd) {
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
    const auto port = ntohs(reinterpret_cast<sockaddr_in&>(local).sin_port);
    std::lock_guard lock(mutex_);
    return index < connections_.size() && connections_[index]->client_port == port;
  }
  std::uint64_t forwarded(std::size_t index) {
    std::lock_guard lock(mutex_);
    return connections_.at(index)->forwarded;
  }
  // forwarded() once the connection's pump has counted the chunk it is writing (the target
  // may already have read it), waiting at most 2 s.
  std::uint64_t forwarded_when_settled(std::size_t index) {
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
    while (true) {
      {
        std::lock_guard lock(mutex_);
        const Connection& c = *connections_.at(index);
        if (c.holding == 0 || std::chrono::steady_clock::now() > deadline) return c.forwarded;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }

  // The progress a sender's stream (its socket `fd`) made through the proxy.
  StreamProgress progress(int fd) {
    StreamProgress p = tcp_progress(fd);
    sockaddr_storage local{};
    socklen_t length = sizeof local;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&local), &length);
    const auto port = ntohs(reinterpret_cast<sockaddr_in&>(local).sin_port);
    std::lock_guard lock(mutex_);
    for (auto& c : connections_) {
      if (c->client_port != port) continue;
      int held = 0;
      ::ioctl(c->from.native_handle(), FIONREAD, &held);
      p.acknowledged = c->forwarded;
      p.unacknowledged += static_cast<std::uint64_t>(std::max(held, 0)) + c->holding;
    }
    return p;
  }

 private:
  struct Connection {
    explicit Connection(asio::io_context& io) : from(io), to(io) {}
    asio::ip::tcp::socket from;  // the client's connection to us
    asio::ip::tcp::socket to;    // ours to the target
    std::uint16_t client_port = 0;
    bool paused = false;
    std::optional<std::uint64_t> pause_after;  // forward this many bytes, then pause
    std::uint64_t forwarded = 0;               // client -> target
    std::uint64_t holding = 0;                 // read from the client, not yet forwarded
    std::thread up, down;
  };

  void accept_loop() {
    while (true) {
      auto c = std::make_unique<Connection>(io_);
      asio::error_code ec;
      acceptor_.accept(c->from, ec);
      if (ec) return;
      c->to.connect(loopback(target_port_), ec);
      if (ec) return;
      c->client_port = c->from.remote_endpoint().port();
      Connection& raw = *c;
      std::lock_guard lock(mutex_);
      if (stopping_) return;
      if (auto it = pause_after_.find(connections_.size()); it != pause_after_.end()) {
        raw.pause_after = it->second;
      }
      raw.up = std::thread([this, &raw] { pump(raw, raw.from, raw.to, true); });
      raw.down = std::thread([this, &raw] { pump(raw, raw.to, raw.from, false); });
      connections_.push_back(std::move(c));
    }
  }

  // Reads under the lock (after waiting for data outside it), so that progress() never sees
  // bytes that left the socket but are not yet counted as held.
  void pump(Connection& c, asio::ip::tcp::socket& in, asio::ip::tcp::socket& out, bool up) {
    std::vector<char> buffer(64 * 1024);
    while (true) {
      pollfd readable{in.native_handle(), POLLIN, 0};
      if (::poll(&readable, 1, 100) < 0) break;
      std::unique_lock lock(mutex_);
      if (stopping_) break;
      if (readable.revents == 0) continue;
      std::size_t most = buffer.size();
      if (up && c.pause_after) {
        if (c.forwarded >= *c.pause_after) {
          c.paused = true;  // once: resume() goes on for good
          c.pause_after.reset();
        } else {
          most = std::min<std::size_t>(most, *c.pause_after - c.forwarded);
        }
      }
      const ssize_t n = ::recv(in.native_handle(), buffer.data(), most, MSG_DONTWAIT);
      if (n < 0 && errno == EAGAIN) continue;
      if (n <= 0) break;
      if (up) c.holding = static_cast<std::uint64_t>(n);
      changed_.wait(lock, [&] { return stopping_ || !up || !c.paused; });
      if (stopping_) break;
      lock.unlock();
      asio::error_code ec;
      asio::write(out, asio::buffer(buffer.data(), static_cast<std::size_t>(n)), ec);
      if (ec) break;
      if (up) {
        lock.lock();
        c.forwarded += static_cast<std::uint64_t>(n);
        c.holding = 0;
      }
    }
    ::shutdown(out.native_handle(), SHUT_WR);
  }

  void set_paused(std::size_t index, bool paused) {
    {
      std::lock_guard lock(mutex_);
      connections_.at(index)->paused = paused;
    }
    changed_.notify_all();
  }

  std::uint16_t target_port_;
  asio::io_context io_;
  asio::ip::tcp::acceptor acceptor_{io_};
  std::thread acceptor_thread_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Connection>> connections_;
  std::map<std::size_t, std::uint64_t> pause_after_;  // by connection index
};

}  // namespace multilane::runtime::testing
