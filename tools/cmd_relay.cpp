// `multilane relay` — forwards authenticated channels of one job (MPWide's Forwarder).
//
//   multilane relay [--listen ADDR:PORT] [--forward HOST:PORT] [--secret-file FILE] [--job ID]
//                   [--allow NET/LEN]... [--connect-timeout S] [--stats] [--duration S]
//
// Runs on a host both networks reach. Only clients that prove the job's secret get anything
// forwarded, only to targets that prove it too and lie in the --allow networks (default: any).
// The secret comes from --secret-file (first line) or MULTILANE_SECRET; the job id from --job
// or MULTILANE_JOB_ID. Prints "multilane relay: listening on ADDR:PORT for job J", then a line
// per refused connection; with --stats also a line per channel opened and closed. SIGUSR1
// prints the counters; SIGINT, SIGTERM or the end of --duration stop it, printing them.
//
// With --forward the relay is MPWide's Forwarder: every stream that connects to --listen (and
// proves the secret) goes to HOST:PORT, whose end takes the relay for its peer, so programs
// that name no relay (MPWide programs on the drop-in) go through it; e.g.
// `multilane relay --listen 0.0.0.0:16256 --forward 10.1.0.5:16256` where MPWide's Forwarder
// is given source 0 16256 and destination 10.1.0.5 16256, for paths of any stream count.
#include <fmt/format.h>

#include <cstdio>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "cli_options.hpp"
#include "command.hpp"
#include "multilane/errors.hpp"
#include "runtime/tcp/auth.hpp"
#include "wan/daemon_signals.hpp"
#include "wan/path_connect.hpp"
#include "wan/relay_server.hpp"
#include "wan/tool_credentials.hpp"

namespace multilane::cli {

namespace {

struct RelayArgs {
  std::string listen = "0.0.0.0:7446";
  std::string forward;
  std::string secret_file;
  std::optional<std::uint64_t> job;
  std::vector<std::string> allow;
  double connect_timeout = 10;
  bool stats = false;
  std::optional<double> duration;
};

std::mutex output_mutex;

void say(const std::string& line) {
  std::lock_guard lock(output_mutex);
  fmt::print("{}\n", line);
  std::fflush(stdout);
}

int run_relay(const RelayArgs& args) {
  const channels::Credentials credentials = wan::tool_credentials(args.secret_file, args.job);
  wan::RelayServerOptions options;
  options.gate.listen = wan::resolve_host_port(args.listen, "--listen", true);
  options.gate.job_id = credentials.job_id;
  options.gate.secret = runtime::JobSecret::from_text(credentials.secret);
  options.connect_timeout = seconds(args.connect_timeout);
  options.allow = args.allow;
  if (!args.forward.empty()) options.forward_to = wan::resolve_host_port(args.forward, "--forward");
  // Signals are set up before the relay's threads exist, so that they all block them. The
  // handlers reach the server under a lock, and only while it exists.
  std::mutex server_mutex;
  wan::RelayServer* running = nullptr;
  bool stop_requested = false;
  wan::DaemonSignals signals(
      [&] {
        std::lock_guard lock(server_mutex);
        if (running) say("multilane relay: " + wan::stats_text(running->stats()));
      },
      [&] {
        std::lock_guard lock(server_mutex);
        stop_requested = true;
        if (running) running->stop();
      },
      args.duration ? std::optional(seconds(*args.duration)) : std::nullopt);
  wan::RelayServer server(options, [&](wan::RelayEvent event, const std::string& text) {
    if (event == wan::RelayEvent::Refused || args.stats) say("multilane relay: " + text);
  });
  {
    std::lock_guard lock(server_mutex);
    running = &server;
    if (stop_requested) server.stop();
  }
  say(fmt::format("multilane relay: listening on {} for job {}{}",
                  wan::endpoint_text({options.gate.listen.address(), server.port()}),
                  credentials.job_id,
                  options.forward_to
                      ? fmt::format(", forwarding to {}", wan::endpoint_text(*options.forward_to))
                      : ""));
  server.run();
  {
    std::lock_guard lock(server_mutex);
    running = nullptr;
  }
  say("multilane relay: " + wan::stats_text(server.stats()));
  return 0;
}

const bool relay_registered = register_command(
    {"relay", "Forward authenticated channels of one job between networks", [](CLI::App& sub) {
       auto args = std::make_shared<RelayArgs>();
       sub.add_option("--listen", args->listen, "ADDR:PORT to listen on (port 0: any)")
           ->capture_default_str();
       sub.add_option("--forward", args->forward,
                      "HOST:PORT every client goes to, taking the relay for its peer (as "
                      "MPWide's Forwarder)");
       sub.add_option("--secret-file", args->secret_file,
                      "file whose first line is the job secret (else MULTILANE_SECRET)");
       sub.add_option("--job", args->job, "job id (else MULTILANE_JOB_ID, else 0)");
       sub.add_option("--allow", args->allow,
                      "network targets must be in, e.g. 10.1.0.0/16 (repeatable; default any)");
       sub.add_option("--connect-timeout", args->connect_timeout,
                      "seconds to reach and authenticate a target")
           ->check(CLI::PositiveNumber)
           ->capture_default_str();
       sub.add_flag("--stats", args->stats, "print a line per channel opened and closed");
       sub.add_option("--duration", args->duration, "stop after this many seconds")
           ->check(CLI::PositiveNumber);
       return [args] { return run_relay(*args); };
     }});

}  // namespace

}  // namespace multilane::cli
