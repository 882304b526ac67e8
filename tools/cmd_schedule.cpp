// `multilane schedule`: print the schedule an algorithm builds, as text or JSON.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include <iostream>
#include <memory>

#include "command.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"
#include "reduction_options.hpp"

namespace {

struct ScheduleArgs {
  std::string platform;
  std::string collective = "bcast";
  std::string algorithm = "multilane";
  std::string size = "1MiB";
  std::string segment;
  int root = 0;
  int wan_pairs = 0;
  int max_ranks = 8;
  bool json = false;
  multilane::cli::ReductionOptions reduction{"int8"};
};

int print_schedule(const ScheduleArgs& args) {
  using namespace multilane;
  const Platform platform =
      args.platform.empty() ? generate_platform({}) : load_platform_file(args.platform);
  const auto collective = parse_collective(args.collective);
  if (!collective) {
    throw UsageError(fmt::format("--collective \"{}\" is unknown: choose {}", args.collective,
                                 collective_names()));
  }
  BuildParams params;
  if (is_reduction(*collective)) {
    params.element_size = static_cast<std::uint32_t>(element_size(args.reduction.parse().type));
  }
  params.root = args.root;
  params.size = parse_size(args.size);
  if (!args.segment.empty()) params.segment = parse_size(args.segment);
  params.wan_pairs = args.wan_pairs;
  const Schedule schedule = build_schedule(platform, *collective, args.algorithm, params);
  if (args.json) {
    // The pairs are a parameter of the call, not part of the schedule: shown beside it.
    nlohmann::json doc = nlohmann::json::parse(schedule_to_json(schedule));
    doc["wan_pairs"] = wan_pairs_used(platform, *collective, args.algorithm, params);
    std::cout << doc.dump() << "\n";
  } else {
    std::cout << schedule_to_text(schedule, args.max_ranks);
  }
  return 0;
}

const bool schedule_registered = multilane::cli::register_command(
    {"schedule", "Print the schedule an algorithm builds (per-rank sends, receives, copies)",
     [](CLI::App& app) -> multilane::cli::Runner {
       auto args = std::make_shared<ScheduleArgs>();
       app.add_option("--platform", args->platform,
                      "Platform TOML file (default: 2 sites x 16 nodes x 2 lanes)");
       app.add_option("--collective,-c", args->collective, multilane::collective_names());
       args->reduction.add_to(app);
       app.add_option("--algorithm,-a", args->algorithm, "See `multilane algorithms`");
       app.add_option("--size,-s", args->size,
                      "Message size (bcast, reduce, allreduce) or per-rank block, e.g. 1MiB");
       app.add_option("--segment", args->segment, "Pipelining segment size (default 64KiB)");
       app.add_option("--root", args->root, "Root rank")->check(CLI::NonNegativeNumber);
       app.add_option("--wan-pairs", args->wan_pairs,
                      "WAN node pairs for multilane scatter/gather (0: auto)")
           ->check(CLI::NonNegativeNumber);
       app.add_option("--max-ranks", args->max_ranks, "Ranks to print in text form (-1: all)");
       app.add_flag("--json", args->json, "Print JSON instead of text");
       return [args] { return print_schedule(*args); };
     }});

}  // namespace
