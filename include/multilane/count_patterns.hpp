// multilane/count_patterns.hpp — uneven block sizes for the v-forms, by name, for the tools
// (`verify`, `bench`, `sim --counts`) and the tests.
//
// Each pattern gives the counts of a v-form on p ranks (p of them, p² for alltoallv: row =
// sender) whose largest is `size`:
//   ramp      every block different: block i is size*(i+1)/p (alltoallv: the pair (i, j) gets
//             size*((i+2j) mod p + 1)/p), so small sizes also give zeros;
//   zeros     every other block empty, the others `size` (alltoallv: pairs with i+j odd empty);
//   one-huge  one block of `size` (rank p/2's; alltoallv: from p/2 to (p/2+1) mod p), the
//             others 1 byte (0 when size is 0).
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "multilane/schedule.hpp"

namespace multilane {

enum class CountsPattern : std::uint8_t { Ramp, Zeros, OneHuge };
inline constexpr CountsPattern kAllCountsPatterns[] = {CountsPattern::Ramp, CountsPattern::Zeros,
                                                       CountsPattern::OneHuge};
std::string_view to_string(CountsPattern pattern);
std::optional<CountsPattern> parse_counts_pattern(std::string_view name);
// "ramp, zeros or one-huge".
std::string counts_pattern_names();

// The counts of `pattern` for a v-form (an even collective takes none: empty), in whole
// elements of `element_size` bytes (reduce-scatterv's: the pattern over size/element_size
// elements, each count then times element_size).
std::vector<std::uint64_t> pattern_counts(CountsPattern pattern, Collective collective,
                                          int num_ranks, std::uint64_t size,
                                          std::uint64_t element_size = 1);

// What a tool's --counts gives: a pattern, or the counts themselves ("1MiB,0,4MiB,...", the
// size being their largest).
struct CountsSpec {
  CountsPattern pattern = CountsPattern::Ramp;
  std::vector<std::uint64_t> given;  // empty: the pattern
  // The counts of a call of `collective` on `num_ranks` ranks whose largest block is `size`
  // (given counts: as given; an even collective: none).
  std::vector<std::uint64_t> counts(Collective collective, int num_ranks, std::uint64_t size,
                                    std::uint64_t element_size = 1) const;
};
// A pattern name or a comma-separated list of sizes (units.hpp); throws UsageError naming
// what is wrong ("unknown pattern \"x\": choose ramp, zeros or one-huge, or give the counts").
CountsSpec parse_counts_spec(std::string_view text);

}  // namespace multilane
