// wan/file_server.cpp — the `multilane serve` daemon (see file_server.hpp).
#include "wan/file_server.hpp"

#include <fmt/format.h>
#include <sys/socket.h>
#include <unistd.h>

#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "runtime/streams/stream_set.hpp"
#include "runtime/tcp/transport_error.hpp"
#include "wan/file_protocol.hpp"
#include "wan/path_connect.hpp"

namespace multilane::wan {

namespace {
constexpr int kMaxStreams = 1024;
constexpr auto kSweepPeriod = std::chrono::milliseconds{200};
}  // namespace

FileServer::FileServer(const FileServerOptions& options, Log log)
    : options_(options),
      log_(std::move(log)),
      work_(asio::make_work_guard(loop_)),
      sweeper_(loop_) {
  std::error_code ec;
  if (!std::filesystem::is_directory(options.root, ec)) {
    throw UsageError(fmt::format("{} is not a directory", options.root.string()));
  }
  try {
    gate_ = std::make_unique<AuthGate>(
        loop_, options_.gate,
        [this](asio::io_context&, asio::ip::tcp::socket socket, std::uint64_t identity,
               runtime::Clock::time_point) {
          const StreamTag tag = unpack_tag(identity);
          const std::string peer = runtime::peer_name(socket);
          if (tag.count < 1 || tag.count > kMaxStreams || tag.index >= tag.count) {
            say(fmt::format("refused {}: stream {} of {} is not a copy's stream", peer, tag.index,
                            tag.count));
            return;
          }
          const int fd = socket.release();
          asio::post(loop_, [this, fd, tag, peer] { gather(fd, tag, peer); });
        },
        [this](const std::string& peer, const std::string& reason) {
          say(fmt::format("refused {}: {}", peer, reason));
        });
  } catch (const std::system_error& e) {
    throw runtime::TransportError(
        ErrorKind::resource, fmt::format("cannot listen on {}: {}",
                                         endpoint_text(options.gate.listen), e.code().message()));
  }
}

FileServer::~FileServer() {
  gate_->stop();
  workers_.stop();  // shuts the sessions' sockets, joins
  for (auto& [session, pending] : pending_) {
    for (int fd : pending.fds) {
      if (fd >= 0) ::close(fd);
    }
  }
}

std::uint16_t FileServer::port() const {
  return gate_->port();
}

void FileServer::say(const std::string& line) {
  std::lock_guard lock(log_mutex_);
  if (log_) log_(line);
}

void FileServer::run() {
  gate_->start();
  sweep();
  loop_.run();
}

void FileServer::stop() {
  asio::post(loop_, [this] {
    gate_->stop();
    sweeper_.cancel();
    {
      std::lock_guard lock(mutex_);
      stopping_ = true;
    }
    workers_.stop();  // shuts the sessions' sockets, joins
    for (auto& [session, pending] : pending_) {
      for (int fd : pending.fds) {
        if (fd >= 0) ::close(fd);
      }
    }
    pending_.clear();
    work_.reset();
  });
}

bool FileServer::stopped() {
  std::lock_guard lock(mutex_);
  return stopping_;
}

void FileServer::gather(int fd, StreamTag tag, const std::string& peer) {
  if (stopped()) {
    ::close(fd);
    return;
  }
  auto [it, fresh] = pending_.try_emplace(tag.session);
  Pending& p = it->second;
  if (fresh) {
    p.fds.assign(tag.count, -1);
    p.peer = peer;
    p.first = std::chrono::steady_clock::now();
  }
  if (p.fds.size() != tag.count || p.fds[tag.index] >= 0) {
    ::close(fd);
    say(fmt::format("refused {}: a stream that does not fit its copy's other streams", peer));
    return;
  }
  p.fds[tag.index] = fd;
  if (++p.arrived < static_cast<int>(p.fds.size())) return;
  std::vector<int> fds = std::move(p.fds);
  const std::string from = p.peer;
  pending_.erase(it);
  start_session(std::move(fds), from);
}

void FileServer::start_session(std::vector<int> fds, const std::string& peer) {
  for (int fd : fds) workers_.watch(fd);
  if (workers_.start([this, fds, peer] { session(fds, peer); })) return;
  for (int fd : fds) {  // stopped meanwhile
    workers_.unwatch(fd);
    ::close(fd);
  }
}

void FileServer::session(std::vector<int> fds, const std::string& peer) {
  auto io = std::make_unique<asio::io_context>();
  std::vector<asio::ip::tcp::socket> sockets;
  for (int fd : fds) {
    sockets.emplace_back(*io);
    sockets.back().assign(options_.gate.listen.protocol(), fd);
  }
  runtime::StreamOptions o;
  o.job_id = options_.gate.job_id;
  o.secret = options_.gate.secret;
  o.streams = static_cast<int>(fds.size());
  o.timeout = options_.timeout;
  o.max_message = std::max<std::uint64_t>(kMaxBlock, kControlLimit);
  {
    runtime::StreamSet set(std::move(io), std::move(sockets), o);
    say(fmt::format("copy from {} over {} stream{}", peer, fds.size(), fds.size() == 1 ? "" : "s"));
    say(receive_copy(set, options_.root, registry_).text);
    for (int fd : fds) workers_.unwatch(fd);  // before the set closes them
  }
}

void FileServer::sweep() {
  const auto now = std::chrono::steady_clock::now();
  for (auto it = pending_.begin(); it != pending_.end();) {
    Pending& p = it->second;
    if (now - p.first < options_.gate.handshake_timeout) {
      ++it;
      continue;
    }
    for (int fd : p.fds) {
      if (fd >= 0) ::close(fd);
    }
    say(fmt::format("dropped a copy from {}: {} of {} streams arrived in time", p.peer, p.arrived,
                    p.fds.size()));
    it = pending_.erase(it);
  }
  workers_.reap();
  sweeper_.expires_after(kSweepPeriod);
  sweeper_.async_wait([this](const asio::error_code& ec) {
    // A wait that had already completed when stop() cancelled the timer still runs: re-arming
    // then would keep the loop (and whoever joins it) alive forever.
    if (ec || stopped()) return;
    sweep();
  });
}

}  // namespace multilane::wan
