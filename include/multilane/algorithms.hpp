// multilane/algorithms.hpp — every collective algorithm, as a schedule builder.
//
// A builder turns (collective, algorithm, parameters, platform) into a Schedule. Builders are
// pure: no I/O, no clocks, deterministic. Every builder accepts any root, any number of ranks
// >= 1, any size >= 0 and any platform shape (uneven sites, one-node sites, one lane).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <string_view>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane {

inline constexpr std::uint64_t kDefaultSegment = 64 * 1024;

struct BuildParams {
  int root = 0;
  std::uint64_t size = 0;                   // bytes (whole message for bcast, per rank otherwise)
  std::uint64_t segment = kDefaultSegment;  // pipelining unit for pipelined algorithms (> 0)
  int wan_pairs = 0;                        // multilane scatter/gather: node pairs, 0 = auto
};

struct AlgorithmInfo {
  Collective collective;
  std::string_view name;
  std::string_view summary;  // one line
  std::string_view origin;   // the paper or system it comes from
  bool pipelined;            // uses BuildParams::segment
  bool uses_wan_pairs;       // uses BuildParams::wan_pairs
  Schedule (*build)(const Platform&, const BuildParams&);
};

// Every algorithm, grouped by collective in the order of kAllCollectives.
std::span<const AlgorithmInfo> all_algorithms();
// nullptr when the collective has no algorithm of that name.
const AlgorithmInfo* find_algorithm(Collective collective, std::string_view name);
// Comma-separated names of the algorithms of a collective, for error messages.
std::string algorithm_names(Collective collective);

// Validates the parameters against the platform (root in range, segment > 0, ...) and builds.
// Throws UsageError naming the offending parameter and its allowed range, or the valid
// algorithm names when `algorithm` is unknown.
Schedule build_schedule(const Platform& platform, Collective collective, std::string_view algorithm,
                        const BuildParams& params);

}  // namespace multilane
