// Generated platforms (generate_platform): S sites x N nodes x K lanes x C cores.
//
// Sites are named site0, site1, ...; nodes SITE-0, SITE-1, ... (the names the TOML writer
// abbreviates to `nodes = N`). Every pair of sites gets a WAN link; one rank per core, block.
#include <fmt/format.h>

#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"

namespace multilane {

namespace {

void check_range(std::string_view what, long value, long low, long high) {
  if (value < low || value > high) {
    throw UsageError(fmt::format("{} must be between {} and {}, got {}", what, low, high, value));
  }
}

void check_positive(std::string_view what, double value, bool zero_allowed) {
  if (value < 0 || (value == 0 && !zero_allowed)) {
    throw UsageError(fmt::format("{} must be {}, got {}", what,
                                 zero_allowed ? "zero or positive" : "positive", value));
  }
}

}  // namespace

void check_generate_options(const GenerateOptions& o) {
  check_range("sites", o.sites, 1, kGenerateLimits.sites);
  check_range("nodes", o.nodes, 1, kGenerateLimits.nodes);
  check_range("lanes", o.lanes, 1, kGenerateLimits.lanes);
  check_range("cores", o.cores, 1, kGenerateLimits.cores);
  check_range("sites x nodes x cores (ranks)", static_cast<long>(o.sites) * o.nodes * o.cores, 1,
              kGenerateLimits.ranks);
  check_positive("lane bandwidth", o.lane_bps, false);
  check_positive("LAN latency", o.lan_latency_s, true);
  check_positive("WAN latency", o.wan_latency_s, true);
  check_positive("WAN bandwidth", o.wan_aggregate_bps, false);
  check_positive("WAN connection bandwidth", o.wan_connection_bps, true);
}

Platform generate_platform(const GenerateOptions& o) {
  check_generate_options(o);
  Platform p =
      make_uniform_platform(o.sites, o.nodes, o.lanes, o.cores, o.lane_bps, o.lan_latency_s,
                            o.wan_latency_s, o.wan_aggregate_bps, o.wan_connection_bps);
  for (auto& site : p.sites) {
    for (std::size_t i = 0; i < site.nodes.size(); ++i) {
      p.nodes[site.nodes[i]].name = fmt::format("{}-{}", site.name, i);
    }
  }
  p.name = fmt::format("generated-{}x{}x{}x{}", o.sites, o.nodes, o.lanes, o.cores);
  return p;
}

}  // namespace multilane
