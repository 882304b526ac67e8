// multilane/platform_file.hpp — reading and writing platform TOML files.
//
// The format is documented in docs/platform-format.md; examples are in examples/platforms/.
// Errors are PlatformError with the message `FILE:LINE: key: reason` (unknown keys, missing
// fields, zero or negative bandwidths, unknown sites in WAN links, duplicate names, bad units).
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
  int nodes = 16;             // per site
  int lanes = 2;
  int cores = 1;
  double lane_bps = 125e6;    // 1 Gbit/s
  double lan_latency_s = 50e-6;
  double wan_latency_s = 10e-3;
  double wan_aggregate_bps = 1.25e9;
  double wan_connection_bps = 0;  // 0: no per-connection cap
};
Platform generate_platform(const GenerateOptions& options);

}  // namespace multilane
