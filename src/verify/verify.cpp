// The verifier's pipeline: each stage runs only when the ones before it leave the schedule
// meaningful to look at (see verify.hpp for what each stage checks).
#include "multilane/verify.hpp"

#include "verify/data_flow.hpp"
#include "verify/deadlock.hpp"
#include "verify/execution.hpp"
#include "verify/matching.hpp"
#include "verify/races.hpp"
#include "verify/report.hpp"
#include "verify/structure.hpp"

namespace multilane {

namespace {

std::uint64_t run_checks(const Schedule& schedule, const Platform& platform,
                         const VerifyOptions& options, verify::ErrorSink& sink) {
  if (!verify::check_structure(schedule, platform, sink)) return 0;
  const verify::Matching matching = verify::match_messages(schedule, platform, sink);
  if (!matching.executable) return 0;
  verify::check_races(schedule, sink);

  verify::DataFlow data(schedule, sink, options.commutative);
  verify::Executor executor(schedule, matching);
  if (executor.run(data)) {
    data.check_results();
  } else {
    sink.add(verify::describe_deadlock(executor));
  }
  return executor.transfers_delivered();
}

}  // namespace

VerifyReport verify_schedule(const Schedule& schedule, const Platform& platform,
                             const VerifyOptions& options) {
  verify::ErrorSink sink(options.max_errors);
  VerifyReport report;
  report.ops = schedule.ops.size();
  report.transfers = run_checks(schedule, platform, options, sink);
  report.truncated = sink.full();
  report.errors = sink.take();
  return report;
}

}  // namespace multilane
