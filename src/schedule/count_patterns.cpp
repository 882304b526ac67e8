// count_patterns.cpp — the named uneven block sizes (multilane/count_patterns.hpp).
#include "multilane/count_patterns.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <utility>

#include "multilane/errors.hpp"
#include "multilane/units.hpp"

namespace multilane {

namespace {

constexpr std::array<std::pair<CountsPattern, std::string_view>, 3> kNames = {{
    {CountsPattern::Ramp, "ramp"},
    {CountsPattern::Zeros, "zeros"},
    {CountsPattern::OneHuge, "one-huge"},
}};

// The count of block `index` of `blocks` (index i*p + j for a pair), `pair` set for alltoallv.
std::uint64_t count_of(CountsPattern pattern, int i, int j, bool pair, int p, std::uint64_t size) {
  const auto ranks = static_cast<std::uint64_t>(p);
  switch (pattern) {
    case CountsPattern::Ramp: {
      const auto step = static_cast<std::uint64_t>(pair ? (i + 2 * j) % p : i) + 1;
      return size * step / ranks;
    }
    case CountsPattern::Zeros:
      return (pair ? (i + j) % 2 : i % 2) == 0 ? size : 0;
    case CountsPattern::OneHuge: {
      const bool huge = pair ? (i == p / 2 && j == (p / 2 + 1) % p) : i == p / 2;
      return huge ? size : std::min<std::uint64_t>(size, 1);
    }
  }
  return 0;
}

}  // namespace

std::string_view to_string(CountsPattern pattern) {
  for (const auto& [p, name] : kNames) {
    if (p == pattern) return name;
  }
  return "?";
}

std::optional<CountsPattern> parse_counts_pattern(std::string_view name) {
  for (const auto& [p, n] : kNames) {
    if (n == name) return p;
  }
  return std::nullopt;
}

std::string counts_pattern_names() {
  std::string out;
  for (std::size_t i = 0; i < kNames.size(); ++i) {
    if (i > 0) out += i + 1 == kNames.size() ? " or " : ", ";
    out += kNames[i].second;
  }
  return out;
}

std::vector<std::uint64_t> pattern_counts(CountsPattern pattern, Collective collective,
                                          int num_ranks, std::uint64_t size,
                                          std::uint64_t element_size) {
  std::vector<std::uint64_t> counts;
  if (!is_uneven(collective)) return counts;
  const bool pair = collective == Collective::Alltoallv;
  const std::uint64_t elements = size / element_size;
  for (int i = 0; i < num_ranks; ++i) {
    if (!pair) {
      counts.push_back(count_of(pattern, i, 0, false, num_ranks, elements) * element_size);
      continue;
    }
    for (int j = 0; j < num_ranks; ++j) {
      counts.push_back(count_of(pattern, i, j, true, num_ranks, elements) * element_size);
    }
  }
  return counts;
}

std::vector<std::uint64_t> CountsSpec::counts(Collective collective, int num_ranks,
                                              std::uint64_t size,
                                              std::uint64_t element_size) const {
  if (!is_uneven(collective)) return {};
  if (!given.empty()) return given;
  return pattern_counts(pattern, collective, num_ranks, size, element_size);
}

CountsSpec parse_counts_spec(std::string_view text) {
  if (const auto pattern = parse_counts_pattern(text)) return {.pattern = *pattern, .given = {}};
  if (text.empty() || !std::isdigit(static_cast<unsigned char>(text.front()))) {
    throw UsageError(fmt::format("unknown pattern \"{}\": choose {}, or give the counts", text,
                                 counts_pattern_names()));
  }
  return {.pattern = CountsPattern::Ramp, .given = parse_size_list(text)};
}

}  // namespace multilane
