// runtime/api/algorithm_choice.hpp — what "auto" means: the cost model picks the algorithm.
//
// Every algorithm of the collective is built for the call and simulated on the job's platform
// (the simulator runs the very schedule the runtime would execute, sim.hpp), with a per-message
// software overhead so that tiny segments are not free; the fastest wins. Pipelined algorithms
// get the segment size the closed-form model finds best (model.hpp), unless one is given.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "multilane/algorithms.hpp"
#include "multilane/platform.hpp"

namespace multilane::runtime {

// Software cost of one message of the TCP runtime, seen by the model (system calls, headers).
inline constexpr double kTcpMessageOverheadS = 20e-6;

struct Candidate {
  std::string algorithm;
  BuildParams params;
  double modelled_s = 0;
  double counts_exchange_s = 0;  // the part of modelled_s spent exchanging the counts
};

// Where a v-form's counts are when the call starts. Communicator::runv's callers pass every
// count on every rank. In MPI, and to Communicator::irunv_sharing_counts, a gatherv's or a
// scatterv's are the root's and an alltoallv rank holds its own row (counts_held_apart()):
// there an algorithm that reads every rank's counts (not AlgorithmInfo::own_counts_only) has
// them exchanged first, a bcast of the root's or an allgather of the rows, which the model
// prices as multilane's best algorithm for it and adds to the algorithm's time.
enum class CountsAt { EveryRank, TheirOwners };

struct AlgorithmChoice {
  Candidate best;
  std::vector<Candidate> candidates;  // every algorithm, fastest first
};

// `params.segment` == 0 means "the model's best segment". The candidates are ranked, and
// `modelled_s` given, with the model's own segments; their `params` are what they run with
// (resolve_params()).
AlgorithmChoice choose_algorithm(const Platform& platform, Collective collective,
                                 const BuildParams& params, CountsAt counts = CountsAt::EveryRank);
// The modelled time of exchanging a v-form's counts before an algorithm that reads every rank's
// (0 where every rank holds them: not counts_held_apart()).
double counts_exchange_s(const Platform& platform, Collective collective, int root);
// The parameters a named algorithm runs with (segment resolved when 0). On a platform whose
// rates are guessed, a message larger than kLeastSegmentsOnGuessedRates default segments is cut
// into at least that many: the model's latency terms alone choose few, large segments on a
// guessed fast network (a 16 MiB multilane-sites allreduce in 2 rounds), which a slower real one
// pays for (the emulated grid ran it 1.2x longer than in 8 rounds; docs/performance.md). The
// ranking of choose_algorithm() does not use the cap: the capped rounds' latency, priced on the
// guessed rates, would rank a 1 MiB multilane-sites allreduce below recursive doubling, which
// runs 4.1x slower on the emulated grid.
inline constexpr std::uint64_t kLeastSegmentsOnGuessedRates = 8;
BuildParams resolve_params(const Platform& platform, Collective collective,
                           std::string_view algorithm, const BuildParams& params);
// "bcast of 1048576 bytes, root 0, 8 ranks: chose multilane (segment 65536 bytes), modelled
//  1.2 ms; candidates: multilane 1.2 ms, binary 2.3 ms, ..."; a candidate that exchanges the
//  counts first says how much of its time that takes: "binomial 9.1 ms (5.2 ms counts)".
std::string explain_choice(const AlgorithmChoice& choice, Collective collective,
                           const BuildParams& params, int ranks);

}  // namespace multilane::runtime
