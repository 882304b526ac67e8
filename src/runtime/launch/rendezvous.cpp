// runtime/launch/rendezvous.cpp — RendezvousClient, the in-process store and join_rendezvous() (see
// rendezvous.hpp; the server is in launch_store_server.cpp).
#include "runtime/launch/rendezvous.hpp"

#include <fmt/format.h>

#include <charconv>
#include <condition_variable>
#include <map>
#include <thread>

#include "multilane/errors.hpp"
#include "runtime/launch/launch_store_protocol.hpp"
#include "runtime/tcp/io_wait.hpp"
#include "runtime/tcp/transport_error.hpp"

namespace multilane::runtime {

std::vector<asio::ip::tcp::endpoint> resolve_rendezvous_address(const std::string& address) {
  const HostPort where = parse_host_port(address);
  asio::io_context io;
  asio::ip::tcp::resolver resolver(io);
  asio::error_code error;
  const auto results = resolver.resolve(where.host, std::to_string(where.port),
                                        asio::ip::resolver_base::numeric_service, error);
  if (error || results.empty()) {
    throw TransportError(ErrorKind::usage,
                         fmt::format("cannot resolve the rendezvous host '{}' of {}: {}",
                                     where.host, address, error ? error.message() : "no address"));
  }
  std::vector<asio::ip::tcp::endpoint> endpoints;
  for (const auto& entry : results) endpoints.push_back(entry.endpoint());
  return endpoints;
}

namespace {

constexpr std::string_view kLanesPrefix = "lanes/";
constexpr std::chrono::milliseconds kReconnectPause{50};

// Why a key may be missing, in the words of the convention that names it.
std::string missing_key_hint(std::string_view key) {
  if (key.starts_with(kLanesPrefix)) {
    const std::string_view rank_text = key.substr(kLanesPrefix.size());
    int rank = 0;
    const auto [end, error] =
        std::from_chars(rank_text.data(), rank_text.data() + rank_text.size(), rank);
    if (error == std::errc{} && end == rank_text.data() + rank_text.size()) {
      return fmt::format("rank {} has not published its addresses: did it start?", rank);
    }
  }
  return "no rank has put it yet";
}

std::string get_timeout_text(std::chrono::milliseconds timeout, std::string_view key,
                             std::string_view where) {
  return fmt::format("timed out after {} waiting for key '{}' at {} ({})", seconds_text(timeout),
                     key, where, missing_key_hint(key));
}

std::chrono::milliseconds left_until(Clock::time_point deadline) {
  const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now());
  return std::max(left, std::chrono::milliseconds{1});
}

}  // namespace

std::string lanes_key(int rank) {
  return fmt::format("{}{}", kLanesPrefix, rank);
}

// ---- client ---------------------------------------------------------------------------------

struct RendezvousClient::Connection {
  asio::io_context io;
  asio::ip::tcp::socket socket{io};
};

namespace {

// One connection attempt bounded by `deadline`; the error, or none when connected.
asio::error_code try_connect(RendezvousClient::Connection& c,
                             const asio::ip::tcp::endpoint& endpoint, Clock::time_point deadline) {
  asio::error_code error;
  c.socket.open(endpoint.protocol(), error);
  if (error) return error;
  bool finished = false;
  c.socket.async_connect(endpoint, [&](const asio::error_code& ec) {
    error = ec;
    finished = true;
  });
  if (!run_until(c.io, deadline, [&] { return finished; })) {
    asio::error_code ignored;
    c.socket.close(ignored);
    drain(c.io, [&] { return finished; });
    error = asio::error::timed_out;
  }
  if (error) {
    asio::error_code ignored;
    c.socket.close(ignored);
  }
  return error;
}

}  // namespace

RendezvousClient::RendezvousClient(const std::string& address, std::uint64_t job_id,
                                   const JobSecret& secret, std::chrono::milliseconds timeout,
                                   int rank)
    : address_(address), job_id_(job_id), secret_(secret), timeout_(timeout), rank_(rank) {
  parse_host_port(address_);     // a malformed address is a UsageError, before any waiting
  give_back(take_connection());  // fail now, not at the first call, when it cannot be reached
}

RendezvousClient::~RendezvousClient() = default;

std::unique_ptr<RendezvousClient::Connection> RendezvousClient::take_connection() {
  {
    std::lock_guard lock(mutex_);
    if (idle_) return std::move(idle_);
  }
  const auto deadline = Clock::now() + timeout_;
  const auto endpoints = resolve_rendezvous_address(address_);
  auto c = std::make_unique<Connection>();
  asio::error_code error;
  asio::error_code last_refusal;  // what to report: the last attempt may be cut by the deadline
  for (;;) {
    for (const auto& endpoint : endpoints) {
      error = try_connect(*c, endpoint, deadline);
      if (!error) break;
      if (error != asio::error::timed_out) last_refusal = error;
    }
    if (!error) break;
    if (Clock::now() >= deadline) {
      throw TransportError(
          ErrorKind::timeout,
          fmt::format(
              "cannot reach the rendezvous {} within {}: {} (is it served? multilane launch serves "
              "it, or rank 0 with MULTILANE_RENDEZVOUS_SERVER=rank0)",
              address_, seconds_text(timeout_),
              last_refusal ? last_refusal.message() : "connecting timed out"));
    }
    std::this_thread::sleep_for(
        std::min<Clock::duration>(kReconnectPause, deadline - Clock::now()));
  }
  try {
    authenticate(c->io, c->socket, Role::Connector,
                 {job_id_, secret_, left_until(deadline), static_cast<std::uint64_t>(rank_)});
  } catch (const TransportError& e) {
    throw TransportError(e.kind(),
                         fmt::format("joining the rendezvous {}: {}", address_, e.what()));
  }
  return c;
}

void RendezvousClient::give_back(std::unique_ptr<Connection> connection) {
  std::lock_guard lock(mutex_);
  if (!idle_) idle_ = std::move(connection);  // extra connections of concurrent calls close
}

// Sends one request and returns the response body. `what` says what was going on, for errors
// ("waiting for key 'lanes/3'"); `timeout_text` is the whole error of a timeout.
std::string RendezvousClient::request(const std::string& what, const std::string& timeout_text,
                                      const std::string& bytes) {
  const auto deadline = Clock::now() + timeout_;
  auto c = take_connection();
  const auto check = [&](const IoResult& result) {
    switch (result.outcome) {
      case IoOutcome::Done:
        return;
      case IoOutcome::Timeout:
        throw TransportError(ErrorKind::timeout, timeout_text);
      case IoOutcome::Closed:
        throw TransportError(ErrorKind::peer_gone,
                             fmt::format("the rendezvous {} closed the connection while we were {} "
                                         "(has the launcher, or rank "
                                         "0 that serves it, exited?)",
                                         address_, what));
      case IoOutcome::Failed:
        throw TransportError(kind_of(result.error),
                             fmt::format("{} at the rendezvous {} failed: {}", what, address_,
                                         result.error.message()));
    }
  };
  check(
      write_all(c->io, c->socket, std::as_bytes(std::span(bytes.data(), bytes.size())), deadline));
  StoreResponseBytes header_bytes{};
  check(read_exact(c->io, c->socket, header_bytes, deadline));
  const StoreResponseHeader header = decode_store_response(header_bytes);
  if (header.length > kMaxValueBytes ||
      (header.status != static_cast<std::uint32_t>(StoreStatus::Ok) &&
       header.status != static_cast<std::uint32_t>(StoreStatus::Refused))) {
    throw TransportError(ErrorKind::protocol,
                         fmt::format("the rendezvous {} answered {} with an impossible header "
                                     "(status {}, length {})",
                                     address_, what, header.status, header.length));
  }
  std::string body(header.length, '\0');
  check(read_exact(c->io, c->socket, std::as_writable_bytes(std::span(body.data(), body.size())),
                   deadline));
  give_back(std::move(c));
  if (header.status == static_cast<std::uint32_t>(StoreStatus::Refused)) {
    throw TransportError(ErrorKind::usage,
                         fmt::format("the rendezvous {} refused {}: {}", address_, what, body));
  }
  return body;
}

void RendezvousClient::put(std::string_view key, std::string_view value) {
  check_store_key(key);
  check_store_value(key, value);
  request(fmt::format("storing key '{}'", key),
          fmt::format("timed out after {} storing key '{}' at the rendezvous {}",
                      seconds_text(timeout_), key, address_),
          encode_store_request(StoreRequestKind::Put, key, value));
}

std::string RendezvousClient::get(std::string_view key) {
  check_store_key(key);
  return request(fmt::format("waiting for key '{}'", key),
                 get_timeout_text(timeout_, key, "the rendezvous " + address_),
                 encode_store_request(StoreRequestKind::Get, key, {}));
}

// ---- the stores a rank uses -----------------------------------------------------------------

namespace {

class InProcessRendezvous final : public Rendezvous {
 public:
  explicit InProcessRendezvous(std::chrono::milliseconds timeout) : timeout_(timeout) {}

  void put(std::string_view key, std::string_view value) override {
    check_store_key(key);
    check_store_value(key, value);
    {
      std::lock_guard lock(mutex_);
      values_.insert_or_assign(std::string(key), std::string(value));
    }
    changed_.notify_all();
  }

  std::string get(std::string_view key) override {
    check_store_key(key);
    std::unique_lock lock(mutex_);
    const auto found = [&] { return values_.find(key) != values_.end(); };
    if (!changed_.wait_for(lock, timeout_, found)) {
      throw TransportError(ErrorKind::timeout,
                           get_timeout_text(timeout_, key, "the in-process rendezvous"));
    }
    return values_.find(key)->second;
  }

  std::string address() const override { return "in-process"; }

 private:
  std::chrono::milliseconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::map<std::string, std::string, std::less<>> values_;
};

class RemoteRendezvous final : public Rendezvous {
 public:
  RemoteRendezvous(std::unique_ptr<RendezvousServer> server, const JobEnvironment& env)
      : server_(std::move(server)),
        client_(env.rendezvous, env.job_id, JobSecret::from_text(env.secret), env.timeout,
                env.rank) {}

  void put(std::string_view key, std::string_view value) override { client_.put(key, value); }
  std::string get(std::string_view key) override { return client_.get(key); }
  std::string address() const override { return client_.address(); }

 private:
  std::unique_ptr<RendezvousServer> server_;  // rank 0 serving the store, else null
  RendezvousClient client_;                   // destroyed before the server
};

}  // namespace

std::unique_ptr<Rendezvous> make_in_process_rendezvous(std::chrono::milliseconds timeout) {
  return std::make_unique<InProcessRendezvous>(timeout);
}

std::unique_ptr<Rendezvous> join_rendezvous(const JobEnvironment& env) {
  if (env.rendezvous.empty()) {
    if (env.size > 1) {
      throw UsageError(fmt::format(
          "a job of {} ranks needs MULTILANE_RENDEZVOUS=host:port (see docs/launching.md)",
          env.size));
    }
    return make_in_process_rendezvous(env.timeout);
  }
  std::unique_ptr<RendezvousServer> server;
  if (env.serve_rendezvous) {
    try {
      server = std::make_unique<RendezvousServer>(env.rendezvous, env.job_id,
                                                  JobSecret::from_text(env.secret));
    } catch (const TransportError& e) {
      throw TransportError(e.kind(), fmt::format("rank 0 serves the rendezvous "
                                                 "(MULTILANE_RENDEZVOUS_SERVER=rank0) but {}",
                                                 e.what()));
    }
  }
  return std::make_unique<RemoteRendezvous>(std::move(server), env);
}

}  // namespace multilane::runtime
