// runtime/api/communicator_environment.cpp — Communicator::from_environment(): joining a job
// started by `multilane launch`, mpirun or ssh (docs/launching.md has the contract).
//
// Transport settings may be overridden per run by MULTILANE_* variables (docs/runtime.md):
// STREAMS_LAN, STREAMS_WAN, SOCKET_BUFFER_LAN, SOCKET_BUFFER_WAN, PACING_WAN,
// STRIPE_THRESHOLD, MAX_CHUNK, UNEXPECTED_BUDGET, HOST (the address to listen on when the
// platform gives a lane none) and LANE_ADDRESSES (this rank's lane addresses, comma-separated,
// e.g. set per rank by `multilane launch --emu` for the emulated node it runs on).
// join_by_exchange() (exchange_join.hpp) reads the same transport settings.
#include <fmt/format.h>
#include <unistd.h>

#include <charconv>
#include <utility>

#include "multilane/units.hpp"
#include "runtime/api/communicator_impl.hpp"
#include "runtime/api/exchange_join.hpp"
#include "runtime/launch/job_env.hpp"
#include "runtime/launch/rendezvous.hpp"

namespace multilane {

namespace {

using runtime::JobEnvironment;

// The rendezvous store as the communicator's address book: key "lanes/<rank>".
class RendezvousBook : public runtime::AddressBook {
 public:
  explicit RendezvousBook(runtime::Rendezvous& store) : store_(store) {}
  void publish(int rank, const std::vector<std::string>& addresses) override {
    store_.put(fmt::format("lanes/{}", rank), runtime::join_addresses(addresses));
  }
  void publish_failure(int rank, const runtime::Failure& why) override {
    store_.put(fmt::format("lanes/{}", rank), runtime::failure_value(why));
  }
  std::vector<std::string> lookup(int rank) override {
    const std::string value = store_.get(fmt::format("lanes/{}", rank));
    runtime::check_not_failure(rank, value);
    return runtime::split_addresses(value);
  }

 private:
  runtime::Rendezvous& store_;
};

template <typename T>
void override_from(const JobEnvironment& env, const char* name, T& value, T low, T high,
                   T (*parse)(std::string_view)) {
  auto it = env.settings.find(name);
  if (it == env.settings.end()) return;
  T parsed{};
  try {
    parsed = parse(it->second);
  } catch (const std::exception& e) {
    throw UsageError(fmt::format("MULTILANE_{}={}: {}", name, it->second, e.what()));
  }
  if (parsed < low || parsed > high) {
    throw UsageError(fmt::format("MULTILANE_{}={} is out of range: must be {}..{}", name,
                                 it->second, low, high));
  }
  value = parsed;
}

long long parse_count(std::string_view text) {
  std::size_t used = 0;
  const long long value = std::stoll(std::string(text), &used);
  if (used != text.size()) throw UsageError("not a whole number");
  return value;
}

std::uint64_t parse_bytes(std::string_view text) {
  return parse_size(text);
}

std::uint64_t parse_rate(std::string_view text) {
  return static_cast<std::uint64_t>(parse_bandwidth(text));
}

// "LOW-HIGH", 1 <= LOW <= HIGH <= 65535 (MULTILANE_PORTS).
std::pair<std::uint16_t, std::uint16_t> parse_port_range(const std::string& text) {
  const auto fail = [&text] {
    return UsageError(fmt::format(
        "MULTILANE_PORTS={}: must be LOW-HIGH, two port numbers with 1 <= LOW <= HIGH <= 65535",
        text));
  };
  const auto dash = text.find('-');
  if (dash == std::string::npos) throw fail();
  unsigned low = 0, high = 0;
  const char* begin = text.data();
  const char* middle = begin + dash;
  const char* end = begin + text.size();
  const auto first = std::from_chars(begin, middle, low);
  const auto second = std::from_chars(middle + 1, end, high);
  if (first.ec != std::errc() || first.ptr != middle || second.ec != std::errc() ||
      second.ptr != end || low < 1 || low > high || high > 65535) {
    throw fail();
  }
  return {static_cast<std::uint16_t>(low), static_cast<std::uint16_t>(high)};
}

CommunicatorOptions options_from(const JobEnvironment& env, CommunicatorOptions options) {
  options.timeout = env.timeout;
  options.explain = options.explain || env.explain;
  long long lan = options.lan_streams, wan = options.wan_streams;
  long long lan_buffer = options.lan_socket_buffer, wan_buffer = options.wan_socket_buffer;
  override_from(env, "STREAMS_LAN", lan, 1LL, 256LL, parse_count);
  override_from(env, "STREAMS_WAN", wan, 1LL, 256LL, parse_count);
  override_from(env, "SOCKET_BUFFER_LAN", lan_buffer, 0LL, 1LL << 30, parse_count);
  override_from(env, "SOCKET_BUFFER_WAN", wan_buffer, 0LL, 1LL << 30, parse_count);
  options.lan_streams = static_cast<int>(lan);
  options.wan_streams = static_cast<int>(wan);
  options.lan_socket_buffer = static_cast<int>(lan_buffer);
  options.wan_socket_buffer = static_cast<int>(wan_buffer);
  override_from(env, "PACING_WAN", options.wan_pacing_bps, std::uint64_t{0}, ~std::uint64_t{0},
                parse_rate);
  override_from(env, "STRIPE_THRESHOLD", options.stripe_threshold, std::uint64_t{0},
                std::uint64_t{1} << 40, parse_bytes);
  override_from(env, "MAX_CHUNK", options.max_chunk, std::uint64_t{1}, std::uint64_t{1} << 32,
                parse_bytes);
  override_from(env, "UNEXPECTED_BUDGET", options.unexpected_budget, std::uint64_t{0},
                std::uint64_t{1} << 40, parse_bytes);
  if (auto it = env.settings.find("PORTS"); it != env.settings.end()) {
    const auto [low, high] = parse_port_range(it->second);
    options.listen_port_low = low;
    options.listen_port_high = high;
  }
  return options;
}

// MULTILANE_LANE_ADDRESSES: the addresses of this rank's node's lanes, overriding the file's.
void apply_lane_addresses(const JobEnvironment& env, Platform& platform) {
  auto it = env.settings.find("LANE_ADDRESSES");
  if (it == env.settings.end()) return;
  const auto addresses = runtime::split_addresses(it->second);
  auto& lanes = platform.nodes.at(platform.node_of(env.rank)).lanes;
  if (addresses.size() != lanes.size()) {
    throw UsageError(
        fmt::format("MULTILANE_LANE_ADDRESSES={} names {} address(es), but rank {}'s "
                    "node has {} lane(s)",
                    it->second, addresses.size(), env.rank, lanes.size()));
  }
  for (std::size_t i = 0; i < lanes.size(); ++i) lanes[i].address = addresses[i];
}

}  // namespace

Communicator Communicator::from_environment(CommunicatorOptions options) {
  const JobEnvironment env = JobEnvironment::from_environment();
  CommunicatorSetup setup;
  setup.rank = env.rank;
  setup.size = env.size;
  setup.job_id = env.job_id;
  setup.secret = runtime::JobSecret::from_text(env.secret);
  setup.platform = job_platform(env.platform_file, env.size);
  apply_lane_addresses(env, setup.platform);
  setup.options = options_from(env, options);
  if (auto host = env.settings.find("HOST"); host != env.settings.end()) setup.host = host->second;

  std::shared_ptr<runtime::Rendezvous> store = runtime::join_rendezvous(env);
  RendezvousBook book(*store);
  auto impl = std::make_unique<CommunicatorImpl>(std::move(setup), book);
  // A store served by rank 0 must live until every rank has read every address.
  store->put(fmt::format("ready/{}", env.rank), "1");
  if (env.serve_rendezvous && env.rank == 0) {
    for (int rank = 1; rank < env.size; ++rank) store->get(fmt::format("ready/{}", rank));
  }
  impl->keep_alive = store;
  return Communicator(std::move(impl));
}

}  // namespace multilane

namespace multilane::runtime {

namespace {

// The lane addresses of every rank, all-gathered once when this rank publishes its own.
class ExchangeBook : public AddressBook {
 public:
  explicit ExchangeBook(const ExchangeJob& job) : job_(job) {}
  void publish(int rank, const std::vector<std::string>& addresses) override {
    exchange(rank, join_addresses(addresses));
  }
  void publish_failure(int rank, const Failure& why) override {
    exchange(rank, failure_value(why));
  }
  std::vector<std::string> lookup(int rank) override {
    const std::string& value = gathered_.at(static_cast<std::size_t>(rank));
    check_not_failure(rank, value);
    return split_addresses(value);
  }

 private:
  void exchange(int rank, const std::string& mine) {
    if (rank != job_.rank) throw UsageError("an exchange book publishes its own rank only");
    gathered_ = job_.all_gather(mine);
    if (gathered_.size() != static_cast<std::size_t>(job_.size)) {
      throw CommunicationError(ErrorKind::protocol,
                               fmt::format("the address exchange returned {} entries for {} ranks",
                                           gathered_.size(), job_.size));
    }
  }

  const ExchangeJob& job_;
  std::vector<std::string> gathered_;
};

// The MULTILANE_* variables that are not the launcher contract's (transport settings), and
// the timeout; MULTILANE_EXPLAIN is the caller's to pass in `options`.
JobEnvironment transport_environment() {
  std::map<std::string, std::string> variables;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    const std::string name(text.substr(0, equals));
    if (!name.starts_with("MULTILANE_")) continue;
    if (name == "MULTILANE_TIMEOUT" || !is_contract_variable(name)) {
      variables.emplace(name, std::string(text.substr(equals + 1)));
    }
  }
  return JobEnvironment::from_variables(variables);
}

}  // namespace

Communicator join_by_exchange(ExchangeJob job, CommunicatorOptions options) {
  if (!job.all_gather) throw UsageError("join_by_exchange needs an all_gather function");
  ExchangeBook book(job);
  CommunicatorSetup setup;
  try {
    const JobEnvironment env = transport_environment();
    setup.rank = job.rank;
    setup.size = job.size;
    setup.job_id = job.job_id;
    setup.secret = job.secret;
    setup.platform = job.platform;
    setup.options = options_from(env, options);
    if (!job.host.empty()) setup.host = job.host;
  } catch (const std::exception& e) {
    // A setting only this rank has wrong: the others learn it from the exchange.
    book.publish_failure(job.rank, runtime::Failure::of(e));
    throw;
  }
  return Communicator(std::make_unique<CommunicatorImpl>(std::move(setup), book));
}

}  // namespace multilane::runtime
