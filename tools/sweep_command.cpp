#include "sweep_command.hpp"

#include "cli_options.hpp"
#include "plot.hpp"

#include <fmt/format.h>
#include <CLI/CLI.hpp>

#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <string>

#include "multilane/algorithms.hpp"
#include "multilane/count_patterns.hpp"
#include "multilane/errors.hpp"
#include "multilane/model.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"
#include "sim/sweep.hpp"

namespace multilane::cli {

using sim::run_sweep;
using sim::SweepRequest;
using sim::SweepResult;

void add_sweep_options(CLI::App& app, SweepCli& o, SweepEngine engine) {
  const bool is_sim = engine == SweepEngine::Simulator;
  app.add_option("--platform", o.platform, "platform TOML file")->required();
  app.add_option("--collective", o.collective, collective_names());
  o.reduction.add_to(app);
  app.add_option("--algorithm", o.algorithm, "algorithm name, or all")->capture_default_str();
  app.add_option("--sizes", o.sizes, "comma-separated sizes, e.g. 1KiB,1MiB,64MiB")->required();
  app.add_option("--segment", o.segment, "segment size of pipelined algorithms, or auto")
      ->capture_default_str();
  app.add_option("--wan-pairs", o.wan_pairs, "WAN node pairs P (multilane scatter/gather), or auto")
      ->capture_default_str();
  app.add_option("--root", o.root, "root rank")->capture_default_str();
  app.add_option("--counts", o.counts,
                 "the v-forms: uneven block sizes, " + counts_pattern_names() +
                     " (each size is the largest block), or the counts, comma-separated (p of "
                     "them, p*p for alltoallv)")
      ->capture_default_str();
  app.add_option("--overhead", o.overhead, "per-message overhead, e.g. 5us")->capture_default_str();
  app.add_flag("--json", o.json, "print JSON instead of a table");
  app.add_option("--plot", o.plot, "draw time vs size per algorithm (log-log) into this PNG");
  app.add_flag("--sweep-pairs", o.sweep_pairs,
               "scatter/gather: also sweep P = 1..min(n0,n1) (the paper's figures 9-10)");
  if (is_sim) {
    app.add_option("--trace", o.trace, "write a Chrome trace-event JSON of the first run");
    app.add_flag("--compare-model", o.compare_model, "show the closed-form time next to each");
  }
}

// The P sweep: simulated and modelled time of the multilane algorithm for every P.
static std::string pairs_sweep(const Platform& platform, const SweepRequest& base, bool json_out,
                               const std::string& plot) {
  nlohmann::json doc;
  doc["platform"] = platform.name;
  doc["collective"] = std::string(to_string(base.collective));
  doc["x"] = "wan_pairs";
  auto rows = nlohmann::json::array();
  std::string table =
      fmt::format("{:>10} {:>5} {:>12} {:>12}\n", "size", "P", "simulated", "model");
  for (std::uint64_t size : base.sizes) {
    for (const auto& pt : wan_pairs_sweep(platform, base.root, size)) {
      SweepRequest r = base;
      r.algorithms = {"multilane"};
      r.sizes = {size};
      r.wan_pairs = pt.pairs;
      r.model = true;
      const SweepResult res = run_sweep(platform, r);
      const auto& row = res.rows.front();
      table += fmt::format("{:>10} {:>5} {:>12} {:>12}\n", format_size(size), pt.pairs,
                           row.sim_s ? format_duration(*row.sim_s) : "-",
                           format_duration(row.model_s.value_or(pt.time_s)));
      nlohmann::json j{{"algorithm", fmt::format("{} sim", format_size(size))},
                       {"size", pt.pairs},
                       {"wan_pairs", pt.pairs},
                       {"time_s", row.sim_s.value_or(pt.time_s)}};
      rows.push_back(j);
      rows.push_back({{"algorithm", fmt::format("{} model", format_size(size))},
                      {"size", pt.pairs},
                      {"wan_pairs", pt.pairs},
                      {"time_s", row.model_s.value_or(pt.time_s)}});
    }
  }
  doc["results"] = rows;
  if (!plot.empty()) {
    run_plot(doc.dump(), plot,
             fmt::format("{} vs WAN pairs P, {}", to_string(base.collective), platform.name));
  }
  return json_out ? doc.dump(2) + "\n" : table;
}

int run_sweep_command(const SweepCli& o, SweepEngine engine) {
  const bool is_sim = engine == SweepEngine::Simulator;
  const auto collective = parse_collective(o.collective);
  if (!collective) {
    throw UsageError(fmt::format("unknown collective \"{}\": choose one of {}", o.collective,
                                 collective_names()));
  }
  SweepRequest req;
  req.collective = *collective;
  if (o.algorithm != "all") req.algorithms = {o.algorithm};
  req.sizes = parse_size_list(o.sizes);
  if (is_reduction(*collective)) {
    const Reduction reduction = o.reduction.parse();
    req.element_size = static_cast<std::uint32_t>(element_size(reduction.type));
    for (auto& size : req.sizes) size = whole_elements(size, reduction);
  }
  if (o.segment != "auto") {
    req.segment = parse_size(o.segment);
    if (*req.segment == 0) throw UsageError("--segment must be at least 1 byte, or auto");
  }
  if (o.wan_pairs != "auto") {
    try {
      std::size_t used = 0;
      req.wan_pairs = std::stoi(o.wan_pairs, &used);
      if (used != o.wan_pairs.size() || req.wan_pairs < 1) throw std::invalid_argument("");
    } catch (const std::exception&) {
      throw UsageError(
          fmt::format("--wan-pairs \"{}\": give a whole number >= 1, or auto", o.wan_pairs));
    }
  }
  req.root = o.root;
  req.counts = parse_option("--counts", o.counts, parse_counts_spec);
  req.overhead_s = parse_duration(o.overhead);
  req.simulate = is_sim;
  req.model = !is_sim || o.compare_model;
  req.trace_first = is_sim && !o.trace.empty();
  const Platform platform = load_platform_file(o.platform);
  if (o.root < 0 || o.root >= platform.num_ranks()) {
    throw UsageError(fmt::format("--root {} is out of range: the platform has {} ranks", o.root,
                                 platform.num_ranks()));
  }
  if (o.sweep_pairs) {
    fmt::print("{}", pairs_sweep(platform, req, o.json, o.plot));
    return 0;
  }
  const SweepResult result = run_sweep(platform, req);
  if (!o.trace.empty() && result.first_trace) {
    std::ofstream(o.trace) << trace_to_json(
        *result.first_trace, platform,
        fmt::format("{} {} on {}", o.collective, result.rows.front().algorithm, platform.name));
  }
  const std::string json_text = sweep_json(result, req, platform);
  if (!o.plot.empty()) {
    run_plot(
        json_text, o.plot,
        fmt::format("{} on {} ({})", o.collective, platform.name, is_sim ? "simulated" : "model"));
  }
  fmt::print("{}", o.json ? json_text : sweep_table(result, req));
  return 0;
}

}  // namespace multilane::cli
