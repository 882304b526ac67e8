// runtime/api/algorithm_choice.cpp — see algorithm_choice.hpp.
#include "runtime/api/algorithm_choice.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "multilane/model.hpp"
#include "multilane/sim.hpp"
#include "support/ceil_div.hpp"

namespace multilane::runtime {

namespace {

// The segment the model finds best for `algorithm` (when `params` leave it to the model), on the
// platform's rates whether measured or guessed; kDefaultSegment for an algorithm that does not
// pipeline or has no closed form.
BuildParams model_params(const Platform& platform, Collective collective,
                         std::string_view algorithm, const BuildParams& params) {
  BuildParams resolved = params;
  if (resolved.segment != 0) return resolved;
  resolved.segment = kDefaultSegment;
  const AlgorithmInfo* info = find_algorithm(collective, algorithm);
  if (info && info->pipelined && params.size > 0 &&
      has_closed_form(platform, collective, algorithm)) {
    resolved.segment =
        choose_segment(platform, collective, algorithm, resolved, kTcpMessageOverheadS, 256);
  }
  return resolved;
}

// On guessed rates, the model's segment capped so that the message goes in at least
// kLeastSegmentsOnGuessedRates rounds (`asked`: the call's own parameters).
BuildParams capped_on_guessed_rates(const Platform& platform, const BuildParams& asked,
                                    BuildParams resolved) {
  if (platform.rates_guessed && asked.segment == 0 && resolved.segment > kDefaultSegment) {
    const std::uint64_t most =
        std::max(kDefaultSegment, ceil_div(asked.size, kLeastSegmentsOnGuessedRates));
    resolved.segment = std::min(resolved.segment, most);
  }
  return resolved;
}

}  // namespace

BuildParams resolve_params(const Platform& platform, Collective collective,
                           std::string_view algorithm, const BuildParams& params) {
  return capped_on_guessed_rates(platform, params,
                                 model_params(platform, collective, algorithm, params));
}

double counts_exchange_s(const Platform& platform, Collective collective, int root) {
  if (!counts_held_apart(collective)) return 0;
  // As Communicator::irunv_sharing_counts sends them: one 64-bit count per rank, the root's
  // to every rank, or every rank's row to every rank.
  const auto row = static_cast<std::uint64_t>(platform.num_ranks()) * sizeof(std::uint64_t);
  if (collective == Collective::Alltoallv) {
    return choose_algorithm(platform, Collective::Allgather, {.size = row}).best.modelled_s;
  }
  return choose_algorithm(platform, Collective::Bcast, {.root = root, .size = row}).best.modelled_s;
}

AlgorithmChoice choose_algorithm(const Platform& platform, Collective collective,
                                 const BuildParams& params, CountsAt counts) {
  AlgorithmChoice choice;
  SimOptions options;
  options.per_message_overhead_s = kTcpMessageOverheadS;
  const double exchange_s =
      counts == CountsAt::TheirOwners ? counts_exchange_s(platform, collective, params.root) : 0;
  for (const AlgorithmInfo& info : all_algorithms()) {
    if (info.collective != collective) continue;
    Candidate candidate;
    candidate.algorithm = std::string(info.name);
    // Ranked as the model would run them: the cap on guessed rates hedges a pipeline's depth
    // against a slower real network, and would rank a pipelined algorithm by rounds the model
    // itself does not need (algorithm_choice.hpp).
    candidate.params = model_params(platform, collective, info.name, params);
    const Schedule schedule = build_schedule(platform, collective, info.name, candidate.params);
    candidate.counts_exchange_s = info.own_counts_only ? 0 : exchange_s;
    candidate.modelled_s =
        simulate(schedule, platform, options).time_s + candidate.counts_exchange_s;
    candidate.params = capped_on_guessed_rates(platform, params, std::move(candidate.params));
    choice.candidates.push_back(std::move(candidate));
  }
  // Stable: among equal times the registry's order (simplest algorithms first) wins.
  std::stable_sort(
      choice.candidates.begin(), choice.candidates.end(),
      [](const Candidate& a, const Candidate& b) { return a.modelled_s < b.modelled_s; });
  choice.best = choice.candidates.front();
  return choice;
}

namespace {

std::string time_text(double seconds) {
  if (seconds < 1e-3) return fmt::format("{:.1f} us", seconds * 1e6);
  if (seconds < 1) return fmt::format("{:.2f} ms", seconds * 1e3);
  return fmt::format("{:.3f} s", seconds);
}

}  // namespace

std::string explain_choice(const AlgorithmChoice& choice, Collective collective,
                           const BuildParams& params, int ranks) {
  std::string text =
      fmt::format("{} of {} bytes, root {}, {} ranks: chose {}", to_string(collective), params.size,
                  params.root, ranks, choice.best.algorithm);
  const AlgorithmInfo* info = find_algorithm(collective, choice.best.algorithm);
  if (info && info->pipelined)
    text += fmt::format(" (segment {} bytes)", choice.best.params.segment);
  text += fmt::format(", modelled {}; candidates:", time_text(choice.best.modelled_s));
  for (const Candidate& c : choice.candidates) {
    text += fmt::format(" {} {}", c.algorithm, time_text(c.modelled_s));
    if (c.counts_exchange_s > 0)
      text += fmt::format(" ({} counts)", time_text(c.counts_exchange_s));
    if (&c != &choice.candidates.back()) text += ",";
  }
  return text;
}

}  // namespace multilane::runtime
