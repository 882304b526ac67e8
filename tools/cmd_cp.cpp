// `multilane cp FILE HOST:PATH` — copies a file to a `multilane serve` over N TCP streams.
//
//   multilane cp FILE HOST:PATH [--port N] [--relay HOST:PORT] [--streams N]
//                [--block-size SIZE] [--tcp-window SIZE] [--pacing-rate RATE] [--force]
//                [--timeout S] [--secret-file FILE] [--job ID] [--progress auto|bar|lines|none]
//
// PATH is taken inside the server's directory (empty or ending in '/': FILE's name there). The
// file is verified end to end (XXH3-64); an interrupted copy resumes from what the server holds
// intact when the same command is run again; an existing file is replaced only with --force.
// Progress: a bar on a terminal, a plain line per second otherwise. Exit status 0 when the
// server kept the file, 1 when the copy failed (the reason and what the server holds for a
// resume are printed), 2 on a bad argument.
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <optional>
#include <string>

#include "cli_options.hpp"
#include "command.hpp"
#include "multilane/errors.hpp"
#include "multilane/units.hpp"
#include "wan/file_client.hpp"
#include "wan/progress.hpp"
#include "wan/tool_credentials.hpp"

namespace multilane::cli {

namespace {

struct CpArgs {
  std::string file;
  std::string target;
  int port = 7447;
  std::string relay;
  int streams = 8;
  std::string block_size = "4MiB";
  std::string tcp_window;
  std::string pacing_rate;
  bool force = false;
  double timeout = 60;
  std::string secret_file;
  std::optional<std::uint64_t> job;
  std::string progress = "auto";
};

// "host:path" or "[v6]:path"
std::pair<std::string, std::string> split_target(const std::string& text) {
  std::size_t colon = std::string::npos;
  std::string host;
  if (text.starts_with('[')) {
    const auto close = text.find(']');
    if (close != std::string::npos && close + 1 < text.size() && text[close + 1] == ':') {
      host = text.substr(1, close - 1);
      colon = close + 1;
    }
  } else {
    colon = text.find(':');
    if (colon != std::string::npos) host = text.substr(0, colon);
  }
  if (colon == std::string::npos || host.empty()) {
    throw UsageError(fmt::format("HOST:PATH: \"{}\" names no host (write host:path)", text));
  }
  return {host, text.substr(colon + 1)};
}

int run_cp(const CpArgs& args) {
  wan::CopyOptions options;
  options.source = args.file;
  std::tie(options.host, options.destination) = split_target(args.target);
  options.port = static_cast<std::uint16_t>(args.port);
  options.relay = args.relay;
  options.credentials = wan::tool_credentials(args.secret_file, args.job);
  options.path.streams = args.streams;
  options.path.timeout = std::chrono::milliseconds(static_cast<long long>(args.timeout * 1000));
  options.block_size = parse_option("--block-size", args.block_size, parse_size);
  if (!args.tcp_window.empty()) {
    const auto window = parse_option("--tcp-window", args.tcp_window, parse_size);
    if (window > (1u << 30)) throw UsageError("--tcp-window: at most 1 GiB");
    options.path.send_buffer = options.path.receive_buffer = static_cast<int>(window);
  }
  if (!args.pacing_rate.empty()) {
    options.path.pacing_rate = static_cast<std::uint64_t>(
        parse_option("--pacing-rate", args.pacing_rate, parse_bandwidth));
  }
  options.force = args.force;

  const bool terminal = ::isatty(STDERR_FILENO) != 0;
  const bool show = args.progress != "none";
  const bool bar = args.progress == "bar" || (args.progress == "auto" && terminal);
  wan::ProgressView view(std::filesystem::path(args.file).filename().string(), stderr, bar);
  bool started = false;
  try {
    const wan::CopyResult result = wan::copy_file(options, [&](const wan::CopyProgress& p) {
      if (!show) return;
      if (!started) {
        if (p.resumed_from > 0) {
          fmt::print(stderr, "resuming at {} (the server holds that much of it)\n",
                     wan::approx_size(p.resumed_from));
        }
        view.start(p.held, p.size);
        started = true;
      }
      view.update(p.held);
    });
    if (show && started) view.finish();
    fmt::print("copied {} ({}) to {}{}, XXH3-64 {:016x}\n", args.file,
               wan::approx_size(result.size), args.target,
               result.resumed_from
                   ? fmt::format(", resumed at {}", wan::approx_size(result.resumed_from))
                   : "",
               result.digest);
    return 0;
  } catch (const wan::CopyError& e) {
    if (show && started) view.finish();
    fmt::print(stderr, "multilane cp: error ({}): {}\n", kind_name(e.kind()), e.what());
    return exit_status(e.kind());
  }
}

const bool cp_registered = register_command(
    {"cp", "Copy a file to a `multilane serve` over parallel streams, verified and resumable",
     [](CLI::App& sub) {
       auto args = std::make_shared<CpArgs>();
       sub.add_option("FILE", args->file, "local file to copy")->required();
       sub.add_option("HOST:PATH", args->target, "server and path inside its directory")
           ->required();
       sub.add_option("--port", args->port, "the server's port")
           ->check(CLI::Range(1, 65535))
           ->capture_default_str();
       sub.add_option("--relay", args->relay, "HOST:PORT of a multilane relay to go through");
       sub.add_option("--streams", args->streams, "parallel TCP streams")
           ->check(CLI::Range(1, 1024))
           ->capture_default_str();
       sub.add_option("--block-size", args->block_size, "bytes per acknowledged block")
           ->capture_default_str();
       sub.add_option("--tcp-window", args->tcp_window, "SO_SNDBUF/SO_RCVBUF of each stream");
       sub.add_option("--pacing-rate", args->pacing_rate,
                      "pace each stream to this rate, e.g. 100Mbit/s");
       sub.add_flag("--force", args->force, "replace an existing file on the server");
       sub.add_option("--timeout", args->timeout, "seconds the copy may stall")
           ->check(CLI::PositiveNumber)
           ->capture_default_str();
       sub.add_option("--secret-file", args->secret_file,
                      "file whose first line is the job secret (else MULTILANE_SECRET)");
       sub.add_option("--job", args->job, "job id (else MULTILANE_JOB_ID, else 0)");
       sub.add_option("--progress", args->progress, "auto (bar on a terminal), bar, lines, none")
           ->check(CLI::IsMember({"auto", "bar", "lines", "none"}))
           ->capture_default_str();
       return [args] { return run_cp(*args); };
     }});

}  // namespace

}  // namespace multilane::cli
