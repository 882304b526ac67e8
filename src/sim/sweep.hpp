// sim/sweep.hpp — what `multilane sim` and `multilane model` compute: every (algorithm, size)
// of a request, simulated and/or modelled, with `auto` segment sizes and WAN pairs resolved.
//
// Segment auto: every pipelined algorithm is run at its best segment size among the model's
// three best candidates (segment_candidates in model.hpp), confirmed by simulation in sim mode.
// WAN pairs auto: the builder's P_opt (wan_pairs.hpp); the P used is reported.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "multilane/count_patterns.hpp"
#include "multilane/platform.hpp"
#include "multilane/schedule.hpp"
#include "multilane/sim.hpp"

namespace multilane::sim {

struct SweepRequest {
  Collective collective = Collective::Bcast;
  std::vector<std::string> algorithms;  // empty: all algorithms of the collective
  std::vector<std::uint64_t> sizes;
  std::optional<std::uint64_t> segment;  // nullopt: auto
  int wan_pairs = 0;                     // 0: auto
  int root = 0;
  bool simulate = true;            // run the simulator
  bool model = false;              // evaluate the closed form
  double overhead_s = 0;           // per-message overhead (simulator and model)
  bool trace_first = false;        // keep the trace of the first (algorithm, size)
  int max_segments = 1024;         // bound on segments per message for segment auto
  std::uint32_t element_size = 1;  // reductions: bytes per element (sizes are whole elements)
  // The v-forms: counts of this pattern with each size as the largest block, or given counts
  // (count_patterns.hpp).
  CountsSpec counts;
};

struct SweepRow {
  std::string algorithm;
  std::uint64_t size = 0;
  std::uint64_t segment = 0;  // 0: not pipelined
  int wan_pairs = 0;
  std::optional<double> sim_s;
  std::optional<double> model_s;
  std::string model_note;  // why no closed form
  std::string error;       // why the algorithm cannot run here
  double ratio_to_best = 0;
  std::uint64_t transfers = 0, events = 0;
  double wall_s = 0;
  std::size_t ops = 0;
  double time() const { return sim_s ? *sim_s : model_s.value_or(0); }
};

struct SweepResult {
  std::vector<SweepRow> rows;
  std::optional<SimResult> first_trace;  // when trace_first
};

// Throws UsageError for an unknown algorithm name, or when a single named algorithm cannot run
// on the platform (with `all`, such rows carry `error` instead).
SweepResult run_sweep(const Platform& platform, const SweepRequest& request);

// Text table (size x algorithm -> time, bandwidth, ratio to best; with both sim and model,
// side by side with their relative difference) and the JSON document of `multilane sim --json`.
std::string sweep_table(const SweepResult& result, const SweepRequest& request);
std::string sweep_json(const SweepResult& result, const SweepRequest& request,
                       const Platform& platform);

}  // namespace multilane::sim
