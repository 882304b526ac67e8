// `multilane router` — a router of the aggregate-router method, or a rank that uses routers.
//
//   multilane router --site S --index I --listen ADDR:PORT --peer SITE=HOST:PORT ...
//                    [--wan-rate RATE] [--wan-window SIZE] [--timeout S] [--stats]
//                    [--duration S] [--secret-file FILE] [--job ID]
//   multilane router --rank R --site S --mode aggregate|static|direct
//                    (--routers HOST:PORT,... | --directory S:R=HOST:PORT,... --listen ADDR:PORT)
//                    (--send-to S:R | --receive-from S:R) [--size SIZE] [--count N]
//                    [--threshold SIZE] [--chunk SIZE] [--nic-rate RATE] [--timeout S]
//
// A site runs R routers (index 0..R-1); router i of a site links to router i of every other
// site (--peer; the lower-numbered site dials). The router prints "multilane router: router I
// of site S listening on ADDR:PORT for job J", a line per link with --stats, its counters on
// SIGUSR1 and when SIGINT, SIGTERM or the end of --duration stop it. --wan-rate paces the links
// to other sites' routers (an external NIC slower than the inter-site link).
//
// The rank role moves --count messages of --size bytes to one rank of another site and waits
// for its acknowledgement (aggregate: striped over all routers of the site; static: through
// router R mod routers; direct: one TCP connection, paced by --nic-rate), checking every byte at
// the receiver; each side prints one line, the sender with the throughput. Both sides need the
// job's secret (--secret-file or MULTILANE_SECRET).
#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cstdio>
#include <map>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "command.hpp"
#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "runtime/tcp/auth.hpp"
#include "wan/daemon_signals.hpp"
#include "wan/path_connect.hpp"
#include "wan/progress.hpp"
#include "wan/routed_endpoint.hpp"
#include "wan/router.hpp"
#include "wan/tool_credentials.hpp"

namespace multilane::cli {

namespace {

struct RouterArgs {
  std::optional<int> site;
  std::optional<int> index;
  std::optional<int> rank;
  std::string listen;
  std::vector<std::string> peers;
  std::string wan_rate;
  std::string wan_window;
  double timeout = 60;
  bool stats = false;
  std::optional<double> duration;
  std::string secret_file;
  std::optional<std::uint64_t> job;
  // rank role
  std::string mode = "aggregate";
  std::vector<std::string> routers;
  std::vector<std::string> directory;
  std::string send_to;
  std::string receive_from;
  std::string size = "64MiB";
  int count = 4;
  std::string threshold = "32KiB";
  std::string chunk = "1MiB";
  std::string nic_rate;
};

void say_as_router(const std::string& line) {
  static std::mutex mutex;
  std::lock_guard lock(mutex);
  fmt::print("multilane router: {}\n", line);
  std::fflush(stdout);
}

int number(std::string_view text, std::string_view what) {
  int value = -1;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (ec != std::errc{} || end != text.data() + text.size() || value < 0) {
    throw UsageError(fmt::format("{}: \"{}\" is not a number >= 0", what, text));
  }
  return value;
}

// "S:R" -> rank R of site S
wan::RankAddress rank_address(const std::string& text, std::string_view what) {
  const auto colon = text.find(':');
  if (colon == std::string::npos) {
    throw UsageError(fmt::format("{}: \"{}\" is not SITE:RANK", what, text));
  }
  return {static_cast<std::uint16_t>(number(text.substr(0, colon), what)),
          static_cast<std::uint32_t>(number(text.substr(colon + 1), what))};
}

std::uint64_t rate(const std::string& text, std::string_view option) {
  if (text.empty()) return 0;
  return static_cast<std::uint64_t>(parse_option(option, text, parse_bandwidth));
}

int run_router(const RouterArgs& args, const channels::Credentials& credentials) {
  if (!args.index || args.listen.empty()) {
    throw UsageError("a router needs --site, --index and --listen");
  }
  wan::RouterOptions o;
  o.site = static_cast<std::uint16_t>(*args.site);
  o.index = static_cast<std::uint32_t>(*args.index);
  o.listen = wan::resolve_host_port(args.listen, "--listen", true);
  for (const std::string& peer : args.peers) {
    const auto equals = peer.find('=');
    if (equals == std::string::npos) {
      throw UsageError(fmt::format("--peer: \"{}\" is not SITE=HOST:PORT", peer));
    }
    const int site = number(peer.substr(0, equals), "--peer");
    if (site == *args.site || site > 65535) {
      throw UsageError(fmt::format("--peer: site {} is this router's own or out of range", site));
    }
    o.peers[static_cast<std::uint16_t>(site)] =
        wan::resolve_host_port(peer.substr(equals + 1), "--peer");
  }
  o.job_id = credentials.job_id;
  o.secret = runtime::JobSecret::from_text(credentials.secret);
  o.timeout = seconds(args.timeout);
  o.wan_pacing = rate(args.wan_rate, "--wan-rate");
  if (!args.wan_window.empty()) {
    o.wan_buffer = static_cast<int>(std::min<std::uint64_t>(
        parse_option("--wan-window", args.wan_window, parse_size), 1u << 30));
  }
  std::mutex router_mutex;
  wan::Router* running = nullptr;
  bool stop_requested = false;
  wan::DaemonSignals signals(
      [&] {
        std::lock_guard lock(router_mutex);
        if (running) say_as_router(wan::stats_text(running->stats()));
      },
      [&] {
        std::lock_guard lock(router_mutex);
        stop_requested = true;
        if (running) running->stop();
      },
      args.duration ? std::optional(seconds(*args.duration)) : std::nullopt);
  wan::Router router(o, [&](const std::string& line) {
    if (args.stats || line.starts_with("refused") || line.starts_with("cannot"))
      say_as_router(line);
  });
  {
    std::lock_guard lock(router_mutex);
    running = &router;
    if (stop_requested) router.stop();
  }
  say_as_router(fmt::format("router {} of site {} listening on {} for job {}", o.index, o.site,
                            wan::endpoint_text({o.listen.address(), router.port()}),
                            credentials.job_id));
  router.run();
  {
    std::lock_guard lock(router_mutex);
    running = nullptr;
  }
  say_as_router(wan::stats_text(router.stats()));
  return 0;
}

// Bytes that depend on the position and the message number, so a misplaced chunk shows.
void fill(std::vector<std::byte>& bytes, int message) {
  for (std::size_t i = 0; i < bytes.size(); ++i) {
    bytes[i] = static_cast<std::byte>(
        (i * 131 + static_cast<std::size_t>(message) * 7 + (i >> 12)) & 0xff);
  }
}

int run_rank(const RouterArgs& args, const channels::Credentials& credentials) {
  wan::RankOptions o;
  o.self = {static_cast<std::uint16_t>(*args.site), static_cast<std::uint32_t>(*args.rank)};
  o.mode = parse_option("--mode", args.mode,
                        [](const std::string& t) { return wan::parse_route_mode(t); });
  for (const std::string& r : args.routers)
    o.routers.push_back(wan::resolve_host_port(r, "--routers"));
  for (const std::string& entry : args.directory) {
    const auto equals = entry.find('=');
    if (equals == std::string::npos) {
      throw UsageError(fmt::format("--directory: \"{}\" is not SITE:RANK=HOST:PORT", entry));
    }
    o.directory[rank_address(entry.substr(0, equals), "--directory")] =
        wan::resolve_host_port(entry.substr(equals + 1), "--directory");
  }
  if (o.mode == wan::RouteMode::Direct) {
    if (args.listen.empty()) throw UsageError("the direct mode needs --listen");
    o.listen = wan::resolve_host_port(args.listen, "--listen", true);
  }
  o.threshold = parse_option("--threshold", args.threshold, parse_size);
  o.max_chunk = parse_option("--chunk", args.chunk, parse_size);
  o.job_id = credentials.job_id;
  o.secret = runtime::JobSecret::from_text(credentials.secret);
  o.timeout = seconds(args.timeout);
  o.direct_pacing = rate(args.nic_rate, "--nic-rate");
  if (args.send_to.empty() == args.receive_from.empty()) {
    throw UsageError("a rank needs one of --send-to and --receive-from");
  }
  const std::uint64_t size = parse_option("--size", args.size, parse_size);
  wan::RankEndpoint endpoint(o);
  if (o.mode == wan::RouteMode::Direct) {
    say_as_router(fmt::format("rank {} of site {} listening on {}", o.self.rank, o.self.site,
                              wan::endpoint_text({o.listen.address(), endpoint.port()})));
  }
  endpoint.connect();
  std::vector<std::byte> buffer(size), expected(size);
  std::vector<std::byte> ack(1);
  if (!args.send_to.empty()) {
    const wan::RankAddress to = rank_address(args.send_to, "--send-to");
    const auto start = std::chrono::steady_clock::now();
    for (int m = 0; m < args.count; ++m) {
      fill(buffer, m);
      endpoint.send(to, buffer);
    }
    endpoint.recv(to, ack);
    const double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    const double bytes = static_cast<double>(size) * args.count;
    say_as_router(fmt::format("{} sent {} x {} to {} in {:.3f} s: {} ({}, {} routers)",
                              to_string(o.self), args.count, wan::approx_size(size), to_string(to),
                              elapsed, format_bandwidth(bytes / elapsed), to_string(o.mode),
                              o.routers.size()));
    return 0;
  }
  const wan::RankAddress from = rank_address(args.receive_from, "--receive-from");
  int wrong = 0;
  for (int m = 0; m < args.count; ++m) {
    endpoint.recv(from, buffer);
    fill(expected, m);
    if (buffer != expected) ++wrong;
  }
  endpoint.send(from, ack);
  say_as_router(
      fmt::format("{} received {} x {} from {}: {}", to_string(o.self), args.count,
                  wan::approx_size(size), to_string(from),
                  wrong == 0 ? "every byte as sent" : fmt::format("{} messages WRONG", wrong)));
  return wrong == 0 ? 0 : 1;
}

int run(const RouterArgs& args) {
  if (!args.site) throw UsageError("--site is required");
  const channels::Credentials credentials = wan::tool_credentials(args.secret_file, args.job);
  return args.rank ? run_rank(args, credentials) : run_router(args, credentials);
}

const bool router_registered = register_command(
    {"router", "Aggregate router of a site, or a rank sending through routers", [](CLI::App& sub) {
       auto args = std::make_shared<RouterArgs>();
       sub.add_option("--site", args->site, "this process's site")->check(CLI::Range(0, 65535));
       sub.add_option("--index", args->index, "router: its index within the site")
           ->check(CLI::Range(0, 65535));
       sub.add_option("--rank", args->rank, "rank role: the rank within the site")
           ->check(CLI::Range(0, 1 << 30));
       sub.add_option("--listen", args->listen, "ADDR:PORT to listen on (port 0: any)");
       sub.add_option("--peer", args->peers, "router: SITE=HOST:PORT of its peer at another site");
       sub.add_option("--wan-rate", args->wan_rate,
                      "router: pace links to other sites, e.g. 1Gbit/s");
       sub.add_option("--wan-window", args->wan_window, "router: SO_SNDBUF of those links");
       sub.add_option("--timeout", args->timeout, "seconds a wait may last without progress")
           ->check(CLI::PositiveNumber)
           ->capture_default_str();
       sub.add_flag("--stats", args->stats, "router: print a line per link");
       sub.add_option("--duration", args->duration, "router: stop after this many seconds")
           ->check(CLI::PositiveNumber);
       sub.add_option("--secret-file", args->secret_file,
                      "file whose first line is the job secret (else MULTILANE_SECRET)");
       sub.add_option("--job", args->job, "job id (else MULTILANE_JOB_ID, else 0)");
       sub.add_option("--mode", args->mode, "rank: aggregate, static or direct")
           ->capture_default_str();
       sub.add_option("--routers", args->routers, "rank: HOST:PORT of the site's routers, in order")
           ->delimiter(',');
       sub.add_option("--directory", args->directory,
                      "rank, direct mode: SITE:RANK=HOST:PORT of every rank")
           ->delimiter(',');
       sub.add_option("--send-to", args->send_to, "rank: SITE:RANK to send to");
       sub.add_option("--receive-from", args->receive_from, "rank: SITE:RANK to receive from");
       sub.add_option("--size", args->size, "rank: bytes per message")->capture_default_str();
       sub.add_option("--count", args->count, "rank: messages")
           ->check(CLI::Range(1, 1 << 20))
           ->capture_default_str();
       sub.add_option("--threshold", args->threshold, "rank: smallest message that is striped")
           ->capture_default_str();
       sub.add_option("--chunk", args->chunk, "rank: largest chunk")->capture_default_str();
       sub.add_option("--nic-rate", args->nic_rate, "rank, direct mode: pace links to other sites");
       return [args] { return run(*args); };
     }});

}  // namespace

}  // namespace multilane::cli
