// multilane/algorithms.hpp — every collective algorithm, as a schedule builder.
//
// A builder turns (collective, algorithm, parameters, platform) into a Schedule. Builders are
// pure: no I/O, no clocks, deterministic. Every builder accepts any root, any number of ranks
// >= 1, any size >= 0 and any platform shape (uneven sites, one-node sites, one lane).
//
// Two-level names: an algorithm with AlgorithmInfo::takes_leaders_algorithm (the SMP paper's
// `hier-shm` of bcast, scatter, gather and allgather) also goes by `base:X`, where X is any
// algorithm of the same collective that is not two-level itself: X runs between the node
// leaders, shared memory within the nodes (`bcast hier-shm:multilane`, `scatter
// hier-shm:binomial`). Such a name is accepted wherever an algorithm name is (find_algorithm,
// build_schedule, the model, the runtime); all_algorithms() lists only the plain names.
#pragma once

#include <cstdint>
#include <initializer_list>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"

namespace multilane {

inline constexpr std::uint64_t kDefaultSegment = 64 * 1024;

struct BuildParams {
  int root = 0;
  std::uint64_t size = 0;                   // bytes (whole message for bcast, per rank otherwise)
  std::uint64_t segment = kDefaultSegment;  // pipelining unit for pipelined algorithms (> 0)
  int wan_pairs = 0;  // multilane scatter/gather, multilane-sites reductions: pairs, 0 = auto
  // Reductions: bytes per element (size is a whole number of them; no segment splits one).
  std::uint32_t element_size = 1;
  // Two-level algorithms: the algorithm run between the node leaders, "" for the builder's own
  // choice. build_schedule() sets it from the name (`hier-shm:X` -> "X", `hier-shm` -> "").
  std::string_view leaders_algorithm{};
  // The v-forms: the bytes of each block (collective.hpp), `size` their largest; empty else.
  std::vector<std::uint64_t> counts{};
  friend bool operator==(const BuildParams&, const BuildParams&) = default;
};

struct AlgorithmInfo {
  Collective collective;
  std::string_view name;
  std::string_view summary;  // one line
  std::string_view origin;   // the paper or system it comes from
  bool pipelined = false;    // uses BuildParams::segment
  // For the algorithms that use BuildParams::wan_pairs: the node pairs their schedule makes
  // cross the WAN for these parameters (the given number, capped, or their own choice for 0).
  // nullptr for every other algorithm.
  int (*wan_pairs)(const Platform&, const BuildParams&) = nullptr;
  Schedule (*build)(const Platform&, const BuildParams&) = nullptr;
  // Node leaders talk over the network, the ranks of a node share memory (group operations).
  bool two_level = false;
  // Two-level, and `name:X` runs algorithm X between the leaders (see the top of this file).
  bool takes_leaders_algorithm = false;
  // Takes a block size per rank (BuildParams::counts): also an algorithm of the collective's
  // v-form (all_algorithms() lists it there too).
  bool uneven = false;
  // Uneven, and a rank's part of the schedule reads only the counts that rank knows from its own
  // arguments: its own row and column of an alltoallv, its own block of a gatherv or scatterv
  // (every block at the root). Ranks may then build it without exchanging counts, each from a
  // counts vector that holds only those (the others 0): their parts are the same as built from
  // every rank's counts (tested for every such algorithm).
  bool own_counts_only = false;
  // For a `base:X` entry of find_algorithm(): X (whose pipelined and use of wan pairs this
  // entry has); "" for every entry of all_algorithms().
  std::string_view leaders_algorithm{};

  bool uses_wan_pairs() const { return wan_pairs != nullptr; }
};

// Every algorithm under its plain name, grouped by collective in the order of kAllCollectives.
std::span<const AlgorithmInfo> all_algorithms();
// Every `base:X` name, grouped by collective, base, then X in the order of all_algorithms().
std::span<const AlgorithmInfo> leaders_variants();
// nullptr when the collective has no algorithm of that name (plain or `base:X`). The result
// lives as long as the program.
const AlgorithmInfo* find_algorithm(Collective collective, std::string_view name);
// Comma-separated plain names of the algorithms of a collective, for error messages.
std::string algorithm_names(Collective collective);
// Comma-separated names of the algorithms a two-level algorithm of `collective` may run
// between the leaders (the collective's algorithms that are not two-level).
std::string leaders_algorithm_names(Collective collective);
// Why `name`, of the form `base:X` with `base` an algorithm of `collective`, is not one, as a
// clause for an error message ("binomial takes no leaders' algorithm (only hier-shm does)",
// "the leaders' algorithm of hier-shm must be one of ..."); "" for every other name.
std::string leaders_algorithm_error(Collective collective, std::string_view name);
// The one message for an algorithm name a collective does not have: "unknown <collective>
// algorithm \"<name>\": " and the leaders_algorithm_error(), or else "choose one of " and the
// algorithm_names(). `also` names what the caller accepts besides the algorithms, listed first
// ({"all", "auto"}: "choose all, auto or one of ...").
std::string unknown_algorithm_message(Collective collective, std::string_view name,
                                      std::initializer_list<std::string_view> also = {});
// The same for a name none of several collectives has (`verify --collective all`): each
// collective's names after its own; for one collective, the message above.
std::string unknown_algorithm_message(std::span<const Collective> collectives,
                                      std::string_view name,
                                      std::initializer_list<std::string_view> also = {});

// The node pairs `algorithm`'s schedule makes cross the WAN for `params` (what a wan_pairs of 0,
// auto, resolves to), 0 for algorithms that take no pairs. The schedule does not carry it: it
// is a parameter of the call, reported by the tools and part of the call's fingerprint.
int wan_pairs_used(const Platform& platform, Collective collective, std::string_view algorithm,
                   const BuildParams& params);

// Validates the parameters against the platform (root in range, segment > 0, ...) and builds.
// Throws UsageError naming the offending parameter and its allowed range, or the valid
// algorithm names when `algorithm` is unknown (for a bad `base:X`, what is wrong with it).
// params.leaders_algorithm is ignored: the name decides it. The schedule is named `algorithm`.
Schedule build_schedule(const Platform& platform, Collective collective, std::string_view algorithm,
                        const BuildParams& params);

}  // namespace multilane
