// `multilane bench-rank` (hidden): what every rank of a `multilane bench` job runs. Rank 0
// writes the measurements as JSON to --result-file for the launching command to print.
#include <fmt/format.h>

#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "bench_options.hpp"
#include "cli_options.hpp"
#include "collective_benchmark.hpp"
#include "command.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/communicator.hpp"
#include "multilane/count_patterns.hpp"
#include "multilane/units.hpp"

namespace multilane::cli {
namespace {

std::vector<std::string> algorithms_to_run(Collective collective, const std::string& choice) {
  if (choice != "all") return {choice};
  std::vector<std::string> names;
  for (const AlgorithmInfo& info : all_algorithms()) {
    if (info.collective == collective) names.emplace_back(info.name);
  }
  return names;
}

nlohmann::json point_json(const runtime::BenchPoint& point) {
  return {{"algorithm", point.algorithm},   {"size", point.size},
          {"iterations", point.iterations}, {"times_s", point.times_s},
          {"median_s", point.median_s},     {"time_s", point.median_s},  // what the plots read
          {"checked", point.checked},       {"check_ok", point.check_ok}};
}

nlohmann::json run_collectives(Communicator& comm, const BenchOptions& o) {
  const Collective collective = *parse_collective(o.collective);
  runtime::BenchSettings settings;
  settings.iterations = o.iterations;
  settings.repetitions = o.repetitions;
  settings.check = o.check;
  settings.root = o.root;
  if (o.shared_buffers) settings.memory = runtime::BenchMemory::Shared;
  if (o.segment != "auto") settings.options.segment = parse_size(o.segment);
  if (is_reduction(collective)) settings.reduction = o.reduction.parse();
  settings.counts = parse_option("--counts", o.counts, parse_counts_spec);
  nlohmann::json results = nlohmann::json::array();
  // Given counts fix the one size (their largest); a pattern is scaled to each of --sizes.
  const std::vector<std::uint64_t> sizes = settings.counts.given.empty()
                                               ? parse_size_list(o.sizes)
                                               : std::vector{largest_count(settings.counts.given)};
  for (std::uint64_t size : sizes) {
    if (is_reduction(collective)) size = whole_elements(size, settings.reduction);
    for (const std::string& algorithm : algorithms_to_run(collective, o.algorithm)) {
      settings.options.algorithm = algorithm;
      results.push_back(point_json(runtime::measure_collective(comm, collective, size, settings)));
    }
  }
  nlohmann::json doc{{"kind", "collective"}, {"collective", o.collective}, {"results", results}};
  if (is_reduction(collective)) {
    doc["type"] = o.reduction.type;
    doc["op"] = o.reduction.op;
  }
  return doc;
}

nlohmann::json run_pingpong(Communicator& comm, const BenchOptions& o) {
  runtime::BenchSettings settings;
  settings.iterations = o.iterations;
  settings.repetitions = o.repetitions;
  settings.check = o.check;
  nlohmann::json results = nlohmann::json::array();
  for (std::uint64_t size : parse_size_list(o.sizes)) {
    results.push_back(point_json(runtime::measure_pingpong(comm, size, settings)));
  }
  return {{"kind", "collective"}, {"collective", "pingpong"}, {"results", results}};
}

nlohmann::json run_p2p(Communicator& comm, const BenchOptions& o) {
  const auto point = runtime::measure_p2p(comm, parse_size(o.size), o.repetitions, o.check);
  return {{"kind", "p2p"},
          {"streams", comm.options().lan_streams},
          {"size", point.size},
          {"times_s", point.times_s},
          {"median_s", point.median_s},
          {"checked", o.check},
          {"check_ok", point.check_ok}};
}

const bool bench_rank_registered = register_command(
    {"bench-rank", "", [](CLI::App& sub) -> Runner {
       sub.group("");  // internal: started by `multilane bench`
       auto o = std::make_shared<BenchOptions>();
       o->add_to(sub);
       sub.add_option("--result-file", o->result_file, "where rank 0 writes the results");
       return [o] {
         auto comm = Communicator::from_environment();
         nlohmann::json doc = o->p2p        ? run_p2p(comm, *o)
                              : o->pingpong ? run_pingpong(comm, *o)
                                            : run_collectives(comm, *o);
         doc["ranks"] = comm.size();
         doc["platform"] = comm.platform().name;
         if (comm.rank() == 0 && !o->result_file.empty()) {
           std::ofstream(o->result_file) << doc.dump() << "\n";
         }
         return 0;
       };
     }});

}  // namespace
}  // namespace multilane::cli
