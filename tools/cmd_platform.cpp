// `multilane platform show FILE` — print a readable summary of a platform file.
// `multilane platform generate --sites S --nodes N --lanes K --cores C [...] [--output FILE]`
//     — write a uniform platform as TOML (stdout by default).
// `mpirun -n N multilane platform probe [--output FILE] [...]`, or
// `multilane platform probe --emu NAME [...]` — measure where the ranks run and write it as a
//     platform file (tools/probe/: the MPI program this starts).
//
// Bad arguments exit with status 2: counts are range-checked by CLI11 against
// kGenerateLimits, quantities ("10ms", "1Gbit/s") by the units parser, whose UsageError is
// prefixed with the option name.
#include <fmt/format.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <memory>

#include "cli_options.hpp"
#include "command.hpp"
#include "emu_mpirun.hpp"
#include "exec_command.hpp"
#include "multilane/emu.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"

namespace multilane::cli {

namespace {

// What the user typed for `generate`; quantities stay text until the command runs.
struct GenerateArgs {
  GenerateOptions options;
  std::string lane_bandwidth = "1Gbit/s";
  std::string lan_latency = "50us";
  std::string wan_latency = "10ms";
  std::string wan_bandwidth = "10Gbit/s";
  std::string wan_connection_bandwidth;  // empty: no per-connection cap
  std::string output;                    // empty: stdout
};

GenerateOptions resolve(const GenerateArgs& args) {
  GenerateOptions o = args.options;
  o.lane_bps = parse_option("--lane-bandwidth", args.lane_bandwidth, parse_bandwidth);
  o.lan_latency_s = parse_option("--lan-latency", args.lan_latency, parse_duration);
  o.wan_latency_s = parse_option("--wan-latency", args.wan_latency, parse_duration);
  o.wan_aggregate_bps = parse_option("--wan-bandwidth", args.wan_bandwidth, parse_bandwidth);
  if (!args.wan_connection_bandwidth.empty()) {
    o.wan_connection_bps =
        parse_option("--wan-connection-bandwidth", args.wan_connection_bandwidth, parse_bandwidth);
  }
  return o;
}

int run_generate(const GenerateArgs& args) {
  const std::string text = platform_to_toml(generate_platform(resolve(args)));
  if (args.output.empty()) {
    fmt::print("{}", text);
    return 0;
  }
  std::ofstream out(args.output, std::ios::binary);
  if (out) out << text;
  if (!out) {
    throw UsageError(
        fmt::format("--output {}: cannot write: {}", args.output, std::strerror(errno)));
  }
  return 0;
}

struct ProbeArgs {
  std::string output;
  std::string name = "probed";
  double seconds = 2;
  int streams = 4;
  std::string emu;
};

// The MPI family whose launcher started this process, from the variables it sets: "openmpi",
// "mpich" (hydra), or "" when none did.
std::string launching_family() {
  if (std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr) return "openmpi";
  if (std::getenv("PMI_SIZE") != nullptr || std::getenv("PMI_RANK") != nullptr) return "mpich";
  return "";
}

// multilane-probe-FAMILY, next to this binary (build/ and the install's bin/).
std::string probe_program(const std::string& family) {
  const std::filesystem::path path = this_program().parent_path() / ("multilane-probe-" + family);
  if (!std::filesystem::exists(path)) {
    throw UsageError(
        fmt::format("{} is missing: the probe is built with the {} development files "
                    "(scripts/install-deps.sh)",
                    path.string(), family == "openmpi" ? "Open MPI" : "MPICH"));
  }
  return path.string();
}

std::vector<std::string> probe_arguments(const ProbeArgs& args) {
  std::vector<std::string> out = {"--name",    args.name,
                                  "--seconds", fmt::format("{}", args.seconds),
                                  "--streams", std::to_string(args.streams)};
  if (!args.output.empty()) {
    out.push_back("--output");
    out.push_back(std::filesystem::absolute(args.output).string());
  }
  return out;
}

int run_probe(const ProbeArgs& args) {
  if (!args.emu.empty()) {
    // One rank per node: the probe measures between nodes.
    std::vector<std::string> command = {"--map-by", "node", probe_program("openmpi")};
    for (const std::string& word : probe_arguments(args)) command.push_back(word);
    return run_emu_mpirun({.name = args.emu,
                           .ranks = static_cast<int>(emu_nodes(args.emu).size()),
                           .mpirun_options = {},
                           .command = command});
  }
  const std::string family = launching_family();
  if (family.empty()) {
    throw UsageError(
        "platform probe measures between the ranks of an MPI job: run it under mpirun or "
        "mpiexec (mpirun -n 8 multilane platform probe --output grid.toml), or on an emulated "
        "grid with --emu NAME");
  }
  std::vector<std::string> argv = {probe_program(family)};
  for (const std::string& word : probe_arguments(args)) argv.push_back(word);
  exec_command(std::move(argv));
}

void add_count(CLI::App& app, const std::string& flag, int& value, int max,
               const std::string& help) {
  app.add_option(flag, value, help)->check(CLI::Range(1, max))->capture_default_str();
}

Runner setup_platform(CLI::App& platform) {
  platform.require_subcommand(1);
  auto file = std::make_shared<std::string>();
  CLI::App* show = platform.add_subcommand("show", "Print a readable summary of a platform file");
  show->add_option("FILE", *file, "Platform TOML file")->required();

  auto args = std::make_shared<GenerateArgs>();
  CLI::App* generate = platform.add_subcommand(
      "generate", "Write a uniform platform (S sites x N nodes x K lanes x C cores) as TOML");
  GenerateOptions& o = args->options;
  add_count(*generate, "--sites", o.sites, kGenerateLimits.sites, "Number of sites");
  add_count(*generate, "--nodes", o.nodes, kGenerateLimits.nodes, "Nodes per site");
  add_count(*generate, "--lanes", o.lanes, kGenerateLimits.lanes, "Lanes (NICs) per node");
  add_count(*generate, "--cores", o.cores, kGenerateLimits.cores, "Cores (ranks) per node");
  generate->add_option("--lane-bandwidth", args->lane_bandwidth, "Bandwidth of each lane")
      ->capture_default_str();
  generate->add_option("--lan-latency", args->lan_latency, "One-way latency inside a site")
      ->capture_default_str();
  generate->add_option("--wan-latency", args->wan_latency, "One-way latency between sites")
      ->capture_default_str();
  generate->add_option("--wan-bandwidth", args->wan_bandwidth, "Aggregate WAN bandwidth B_WAN")
      ->capture_default_str();
  generate->add_option("--wan-connection-bandwidth", args->wan_connection_bandwidth,
                       "Cap on one WAN connection b_WAN (default: none)");
  generate->add_option("--output,-o", args->output, "Write here instead of stdout");

  auto probe_args = std::make_shared<ProbeArgs>();
  CLI::App* probe = platform.add_subcommand(
      "probe",
      "Measure where the ranks of an MPI job run (nodes, lanes, sites, latencies, bandwidths) and "
      "write it as a platform file; run under mpirun, or with --emu");
  probe->add_option("--output,-o", probe_args->output, "Write here instead of stdout");
  probe->add_option("--name", probe_args->name, "The platform's name")->capture_default_str();
  probe->add_option("--seconds", probe_args->seconds, "Length of each bandwidth test")
      ->check(CLI::Range(0.1, 60.0))
      ->capture_default_str();
  probe->add_option("--streams", probe_args->streams, "TCP streams per lane across the WAN")
      ->check(CLI::Range(1, 64))
      ->capture_default_str();
  probe->add_option("--emu", probe_args->emu,
                    "Probe the emulated grid NAME (multilane emu up), one rank per node");

  return [=] {
    if (probe->parsed()) return run_probe(*probe_args);
    if (show->parsed()) {
      fmt::print("{}", describe_platform(load_platform_file(*file)));
      return 0;
    }
    return run_generate(*args);
  };
}

const bool platform_registered = register_command(
    {"platform", "Show, generate or probe platform files (sites, nodes, lanes, WAN links)",
     setup_platform});

}  // namespace

}  // namespace multilane::cli
