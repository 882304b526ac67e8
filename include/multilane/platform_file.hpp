// multilane/platform_file.hpp — reading and writing platform TOML files.
//
// The format is documented in docs/platform-format.md; examples are in examples/platforms/.
// Errors are PlatformError with the message `FILE:LINE: key: reason` (unknown keys, missing
// fields, zero or negative bandwidths, unknown sites in WAN links, duplicate names, bad units);
// KEY is the dotted path of the offending value, like `site[1].node[0].lanes` or
// `placement.nodes[3]`, and LINE its line (a missing key: the line of the table lacking it).
// TOML syntax errors use the key `syntax`; a file that cannot be opened gives
// `FILE: cannot open: REASON`.
#pragma once

#include <string>
#include <string_view>

#include "multilane/platform.hpp"

namespace multilane {

Platform load_platform_file(const std::string& path);
// `source_name` is used in error messages in place of a file name.
Platform parse_platform(std::string_view toml_text, const std::string& source_name);

// A TOML text that load_platform_file reads back into an equal platform.
std::string platform_to_toml(const Platform& platform);
// A readable summary: sites, nodes, lanes, WAN links, placement.
std::string describe_platform(const Platform& platform);

struct GenerateOptions {
  int sites = 2;
  int nodes = 16;  // per site
  int lanes = 2;
  int cores = 1;
  double lane_bps = 125e6;  // 1 Gbit/s
  double lan_latency_s = 50e-6;
  double wan_latency_s = 10e-3;
  double wan_aggregate_bps = 1.25e9;
  double wan_connection_bps = 0;  // 0: no per-connection cap
};
// Largest values generate_platform accepts (the CLI checks its arguments against these).
struct GenerateLimits {
  int sites = 4096;
  int nodes = 65536;
  int lanes = 64;
  int cores = 1024;
  long ranks = 1L << 22;  // sites x nodes x cores
};
inline constexpr GenerateLimits kGenerateLimits{};

// Throws UsageError naming the first option out of range and the allowed range
// ("sites must be between 1 and 4096, got 0"); bandwidths must be positive (the connection
// cap may be 0: none), latencies zero or positive.
void check_generate_options(const GenerateOptions& options);
// Sites site0.., nodes SITE-0.., a WAN link between every two sites, one rank per core.
Platform generate_platform(const GenerateOptions& options);

}  // namespace multilane
