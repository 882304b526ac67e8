// `multilane platform show FILE` — print a readable summary of a platform file.
// `multilane platform generate --sites S --nodes N --lanes K --cores C [...] [--output FILE]`
//     — write a uniform platform as TOML (stdout by default).
//
// Bad arguments exit with status 2: counts are range-checked by CLI11 against
// kGenerateLimits, quantities ("10ms", "1Gbit/s") by the units parser, whose UsageError is
// prefixed with the option name.
#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>

#include "cli_options.hpp"
#include "command.hpp"
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

void add_count(CLI::App& app, const std::string& flag, int& value, int max,
               const std::string& help) {
  app.add_option(flag, value, help)->check(CLI::Range(1, max))->capture_default_str();
}

Runner setup(CLI::App& platform) {
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

  return [=] {
    if (show->parsed()) {
      fmt::print("{}", describe_platform(load_platform_file(*file)));
      return 0;
    }
    return run_generate(*args);
  };
}

const bool registered = register_command(
    {"platform", "Show or generate platform files (sites, nodes, lanes, WAN links)", setup});

}  // namespace

}  // namespace multilane::cli
