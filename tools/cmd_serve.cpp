// `multilane serve DIR` — receives files copied with `multilane cp` into DIR.
//
//   multilane serve DIR [--listen ADDR:PORT] [--secret-file FILE] [--job ID] [--timeout S]
//                       [--duration S]
//
// Only members of the job (its secret from --secret-file or MULTILANE_SECRET) may copy. Paths
// are taken inside DIR; an existing file is replaced only when the client says --force.
// Prints "multilane serve: serving DIR on ADDR:PORT for job J", then a line per copy started,
// finished, refused or interrupted (partial files are kept for a resume). SIGINT, SIGTERM or
// the end of --duration stop it.
#include <fmt/format.h>

#include <cstdio>
#include <mutex>
#include <optional>
#include <string>

#include "cli_options.hpp"
#include "command.hpp"
#include "runtime/tcp/auth.hpp"
#include "wan/daemon_signals.hpp"
#include "wan/file_server.hpp"
#include "wan/path_connect.hpp"
#include "wan/tool_credentials.hpp"

namespace multilane::cli {

namespace {

struct ServeArgs {
  std::string directory;
  std::string listen = "0.0.0.0:7447";
  std::string secret_file;
  std::optional<std::uint64_t> job;
  double timeout = 60;
  std::optional<double> duration;
};

int run_serve(const ServeArgs& args) {
  const channels::Credentials credentials = wan::tool_credentials(args.secret_file, args.job);
  wan::FileServerOptions options;
  options.root = args.directory;
  options.gate.listen = wan::resolve_host_port(args.listen, "--listen", true);
  options.gate.job_id = credentials.job_id;
  options.gate.secret = runtime::JobSecret::from_text(credentials.secret);
  options.timeout = seconds(args.timeout);
  auto say = [](const std::string& line) {
    fmt::print("multilane serve: {}\n", line);
    std::fflush(stdout);
  };
  // Signals first, so that every thread the server starts blocks them; the handlers reach the
  // server under a lock, and only while it exists.
  std::mutex server_mutex;
  wan::FileServer* running = nullptr;
  bool stop_requested = false;
  wan::DaemonSignals signals([] {},
                             [&] {
                               std::lock_guard lock(server_mutex);
                               stop_requested = true;
                               if (running) running->stop();
                             },
                             args.duration ? std::optional(seconds(*args.duration)) : std::nullopt);
  wan::FileServer server(options, say);
  {
    std::lock_guard lock(server_mutex);
    running = &server;
    if (stop_requested) server.stop();
  }
  say(fmt::format("serving {} on {} for job {}", args.directory,
                  wan::endpoint_text({options.gate.listen.address(), server.port()}),
                  credentials.job_id));
  server.run();
  std::lock_guard lock(server_mutex);
  running = nullptr;
  return 0;
}

const bool serve_registered = register_command(
    {"serve", "Receive files copied with `multilane cp` into a directory", [](CLI::App& sub) {
       auto args = std::make_shared<ServeArgs>();
       sub.add_option("DIR", args->directory, "directory to receive into")->required();
       sub.add_option("--listen", args->listen, "ADDR:PORT to listen on (port 0: any)")
           ->capture_default_str();
       sub.add_option("--secret-file", args->secret_file,
                      "file whose first line is the job secret (else MULTILANE_SECRET)");
       sub.add_option("--job", args->job, "job id (else MULTILANE_JOB_ID, else 0)");
       sub.add_option("--timeout", args->timeout, "seconds a copy may stall before it is dropped")
           ->check(CLI::PositiveNumber)
           ->capture_default_str();
       sub.add_option("--duration", args->duration, "stop after this many seconds")
           ->check(CLI::PositiveNumber);
       return [args] { return run_serve(*args); };
     }});

}  // namespace

}  // namespace multilane::cli
