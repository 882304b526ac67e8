// mpi/dispatch.cpp — routing and running one wrapped call (dispatch.hpp).
#include "mpi/dispatch.hpp"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>

#include "mpi/call_class.hpp"
#include "mpi/call_profile.hpp"
#include "mpi/caller_cpu.hpp"
#include "mpi/comm_state.hpp"
#include "mpi/decision_store.hpp"
#include "mpi/dispatch_counters.hpp"
#include "mpi/library.hpp"
#include "mpi/mpi_errors.hpp"
#include "mpi/pending_requests.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/collective.hpp"
#include "multilane/units.hpp"

namespace multilane::mpi {

namespace {

std::uint32_t element_bytes(const CollectiveCall& c) {
  return is_reduction(carrier(c.call)) ? static_cast<std::uint32_t>(element_size(c.reduction.type))
                                       : 1;
}

int root_of(const CollectiveCall& c) {
  return rooted(c.call) ? c.args.root : 0;
}

// What one call runs, and why (the why is built only for MULTILANE_EXPLAIN).
struct Pick {
  RouteChoice run = RouteChoice::Mpi;
  std::string_view algorithm = "auto";         // multilane's
  MeasuredRoutes::Entry* exploring = nullptr;  // set while the class is measured
  MeasuredRoutes::Entry* steady = nullptr;     // set while its decided calls are timed
  // The route stays for the rest of the run, so that the same call again may pass through
  // (repeated_calls.hpp) when it is the MPI library's: not while measured, nor when the class
  // is to be explored at a later call, which its calls count to (kept_for_the_run()).
  bool lasting = true;
};

// The times behind a decision of the class of `key`; a long class's are its slowest rank's.
std::string times_of(const ClassDecision& d, std::uint64_t key) {
  if (d.mpi_s <= 0 && d.multilane_s <= 0) return "";
  const std::string over =
      d.steady_calls > 0 ? fmt::format(" (mean of {} calls)", d.steady_calls) : "";
  const bool on_mpi = d.choice == RouteChoice::Mpi;
  const bool measured = d.source != DecisionSource::Model && d.source != DecisionSource::Default;
  return fmt::format(": MPI library {}{}, multilane {}{}{}", format_duration(d.mpi_s),
                     on_mpi ? over : "", format_duration(d.multilane_s), on_mpi ? "" : over,
                     measured && rates_slowest_rank(key) ? " (slowest rank)" : "");
}

std::string decision_words(const ClassDecision& d, std::uint64_t key) {
  return fmt::format("{}{}{}", to_string(d.source), d.from_tuning_file ? " (tuning file)" : "",
                     times_of(d, key));
}

// A v-form that multilane serves with "auto" is explained after it ran: what "auto" picks
// depends on counts that a gatherv, scatterv or alltoallv exchanges first.
bool explains_after_the_call(const CollectiveCall& c, const Pick& pick) {
  return pick.run == RouteChoice::Multilane && is_v_form(c.call) && pick.algorithm == "auto";
}

// The route MULTILANE_EXPLAIN names: "MPI library", "multilane ring".
std::string explained_choice(const CollectiveCall& c, const CommState& state, const Pick& pick) {
  const Communicator* multilane = state.multilane.get();
  if (pick.run == RouteChoice::Mpi) return "MPI library";
  if (explains_after_the_call(c, pick) && multilane) {
    // After the call: the counts "auto" chose by are this call's.
    return fmt::format("multilane {}", multilane->resolve_algorithm(
                                           carrier(c.call), largest_count(c.counts()), root_of(c),
                                           {.algorithm = std::string(pick.algorithm)},
                                           element_bytes(c), c.counts()));
  }
  if (is_v_form(c.call)) return fmt::format("multilane {}", pick.algorithm);
  if (!multilane) return "multilane";
  return fmt::format(
      "multilane {}",
      multilane->resolve_algorithm(carrier(c.call), c.block, root_of(c),
                                   {.algorithm = std::string(pick.algorithm)}, element_bytes(c)));
}

// How many nodes and sites a communicator's ranks are on.
struct Spread {
  int nodes = 1;
  int sites = 1;
};

// MULTILANE_EXPLAIN's line for a call that takes route `choice`, for `why`.
std::string explain_line(const CollectiveCall& c, Spread layout, std::string_view choice,
                         std::string_view why, bool nonblocking) {
  std::string where = rooted(c.call) ? fmt::format(" root {}", c.args.root) : std::string();
  if (layout.sites > 1) where += fmt::format(" ({} sites)", layout.sites);
  std::string size = fmt::format(" {} B", c.block);
  if (c.call == WrappedCall::Barrier || sizes_per_rank(c.call)) size.clear();
  if (c.call == WrappedCall::Allgatherv) size = fmt::format(" blocks up to {} B", c.block);
  return fmt::format("multilane-mpi: {}{}{}, {} ranks on {} node(s): {} ({})\n",
                     call_function(c.call, nonblocking), size, where, c.size, layout.nodes, choice,
                     why);
}

void explain(const CollectiveCall& c, const CommState& state, const Pick& pick,
             std::string_view why, bool nonblocking) {
  if (!library().settings.explain || c.rank != 0) return;
  const std::string line = explain_line(c, {state.layout.nodes, state.layout.sites},
                                        explained_choice(c, state, pick), why, nonblocking);
  std::fputs(line.c_str(), stderr);
}

// The model's ranking of the algorithms a class starts measuring, explained on rank 0.
void explain_ranking(const CollectiveCall& c, std::string_view ranking) {
  if (!library().settings.explain || c.rank != 0 || ranking.empty()) return;
  const std::string line = fmt::format("multilane-mpi: {}: the model ranks multilane's {}\n",
                                       call_function(c.call, false), ranking);
  std::fputs(line.c_str(), stderr);
}

// A nonblocking v-form on "auto" whose counts travel first is explained once the engine chose
// its algorithm, on the engine's thread (`c` lives until the call completes).
std::function<void(std::string_view)> explain_when_chosen(const CollectiveCall& c,
                                                          const CommState& state, const Pick& pick,
                                                          std::string_view why) {
  if (!library().settings.explain || c.rank != 0 || !explains_after_the_call(c, pick)) return {};
  return [&c, layout = Spread{.nodes = state.layout.nodes, .sites = state.layout.sites},
          why = std::string(why)](std::string_view algorithm) {
    const std::string line =
        explain_line(c, layout, fmt::format("multilane {}", algorithm), why, true);
    std::fputs(line.c_str(), stderr);
  };
}

// A call that stays with the MPI library before it is described, explained on rank 0 (of the
// local group of an intercommunicator).
void explain_fallback(WrappedCall call, MPI_Comm comm, bool nonblocking, const char* why) {
  if (!library().settings.explain || comm == MPI_COMM_NULL) return;
  int rank = -1;
  if (PMPI_Comm_rank(comm, &rank) != MPI_SUCCESS || rank != 0) return;
  std::fprintf(stderr, "multilane-mpi: %s: MPI library (%s)\n",
               call_function(call, nonblocking).c_str(), why);
}

const char* fallback_reason(WrappedCall call) {
  return is_reduction(carrier(call)) ? "a datatype, operation or argument multilane does not serve"
                                     : "arguments for the MPI library to check";
}

// The route rules that need no table: no job slot, a forced route, one rank, no data.
std::optional<Pick> settled(const CommState& state, const CollectiveCall& c) {
  if (!state.may_run_multilane()) return Pick{.run = RouteChoice::Mpi};
  if (const std::string* forced = state.policy->forced(c.call)) {
    if (*forced == "mpi" || c.size == 1) return Pick{.run = RouteChoice::Mpi};
    return Pick{.run = RouteChoice::Multilane, .algorithm = state.policy->candidate(c.call)};
  }
  if (c.size == 1) return Pick{.run = RouteChoice::Mpi};
  if (c.block == 0 && c.call != WrappedCall::Barrier && !sizes_per_rank(c.call)) {
    return Pick{.run = RouteChoice::Mpi};
  }
  return std::nullopt;
}

RouteQuery query_of(const CollectiveCall& c) {
  return {.call = c.call, .bytes = c.block, .element_size = element_bytes(c)};
}

// The class's default route as its decision: the model's where the model priced it.
ClassDecision default_decision(const Route& route) {
  const bool modelled = !route.measure && route.modelled_mpi_s > 0;
  return {.choice = route.multilane ? RouteChoice::Multilane : RouteChoice::Mpi,
          .source = modelled ? DecisionSource::Model : DecisionSource::Default,
          .mpi_s = route.modelled_mpi_s,
          .multilane_s = route.modelled_multilane_s};
}

// The algorithm a decided class runs on multilane's route.
std::string_view decided_algorithm(const ClassDecision& d, std::string_view candidate) {
  return d.algorithm.empty() ? candidate : std::string_view(d.algorithm);
}

// The blocking call's pick; a class met for the first time is entered in the table.
Pick pick_blocking(CommState& state, CollectiveCall& c, std::uint64_t key, bool explore) {
  if (auto pick = settled(state, c)) return *pick;
  MeasuredRoutes::Entry* entry = state.routes.for_blocking_call(key, explore);
  if (!entry) {
    // Frozen, or past the cap on classes: the default route, kept as the class's decision.
    const ClassDecision decision = default_decision(state.policy->choose(query_of(c)));
    state.routes.adopt(key, decision);
    return {.run = decision.choice, .algorithm = state.policy->candidate(c.call)};
  }
  const std::string_view candidate = state.policy->candidate(c.call);
  const bool explores = explore ? entry->explores_next_call() : !entry->decision;
  if (!explores) {
    return {.run = entry->decision->choice,
            .algorithm = decided_algorithm(*entry->decision, candidate),
            .steady = explore && entry->times_decided_call() ? entry : nullptr,
            .lasting = !explore || kept_for_the_run(*entry->decision)};
  }
  if (!entry->decision && entry->exploration.calls() == 0) {
    const Route route = state.policy->choose(query_of(c));
    if (!route.measure) {
      entry->decision = default_decision(route);
      return {.run = entry->decision->choice, .algorithm = candidate};
    }
    // Every rank ranks the same algorithms: a v-form whose sizes are per rank learns every
    // rank's counts first (collective, as is every explored call).
    RoutePolicy::Candidates ranked = state.policy->candidates(query_of(c), c.known_counts());
    explain_ranking(c, ranked.ranking);
    entry->explore(std::move(ranked.algorithms));
  }
  // A decision without an algorithm (a tuning file's) is measured again with the candidate.
  const std::string_view algorithm = entry->next_algorithm();
  return {.run = entry->exploration.next_route(),
          .algorithm = algorithm.empty() ? candidate : algorithm,
          .exploring = entry,
          .lasting = false};
}

void agree(const CollectiveCall& c, double* values, int count, MPI_Op op) {
  const int code = PMPI_Allreduce(MPI_IN_PLACE, values, count, MPI_DOUBLE, op, c.comm);
  if (code != MPI_SUCCESS) {
    throw CommunicationError(ErrorKind::internal, "PMPI_Allreduce of the measured times failed");
  }
}

void agree_mean(void* context, double* values, int count) {
  const auto* c = static_cast<const CollectiveCall*>(context);
  agree(*c, values, count, MPI_SUM);
  for (int i = 0; i < count; ++i) values[i] /= c->size;
}

void agree_slowest(void* context, double* values, int count) {
  agree(*static_cast<const CollectiveCall*>(context), values, count, MPI_MAX);
}

// A long class's timed call starts on every rank at once (rates_slowest_rank()).
void start_together(const CollectiveCall& c) {
  if (PMPI_Barrier(c.comm) != MPI_SUCCESS) {
    throw CommunicationError(ErrorKind::internal, "PMPI_Barrier before a measured call failed");
  }
}

// A v-form whose sizes are per rank, run by a multilane algorithm that reads only each rank's
// own counts: none travel. A function of the algorithm's name alone, which every rank shares.
bool reads_own_counts(const CollectiveCall& c, std::string_view algorithm) {
  if (!sizes_per_rank(c.call) || algorithm == "auto") return false;
  const AlgorithmInfo* info = find_algorithm(carrier(c.call), algorithm);
  return info && info->own_counts_only;
}

void run_multilane(CommState& state, CollectiveCall& c, std::string_view algorithm) {
  const CallerCpu keep_core;
  Communicator& multilane = state.multilane ? *state.multilane : *multilane_of(state);
  const std::uint64_t handed_off = multilane.handed_off();
  c.own_counts_only = reads_own_counts(c, algorithm);
  c.prepare();
  CollectiveOptions& options = state.blocking_options;
  options.algorithm.assign(algorithm);  // no allocation once the longest name was met
  if (is_v_form(c.call)) {
    multilane.runv(carrier(c.call), c.send(), c.recv(), root_of(c), c.counts(), options,
                   c.reduction);
  } else {
    multilane.run(carrier(c.call), c.send(), c.recv(), root_of(c), c.block, options, c.reduction);
  }
  c.finish();
  if (multilane.handed_off() != handed_off) count(Counted::BlockingHandedOff);
}

std::string explain_blocking(const Pick& pick, const MeasuredRoutes& routes, std::uint64_t key,
                             const CollectiveCall& c, const CommState& state) {
  if (!state.may_run_multilane()) {
    return fmt::format(
        "every multilane job a rank may make is taken (MULTILANE_MAX_JOBS={}), and this "
        "communicator shares none of them",
        library().settings.max_jobs);
  }
  if (pick.exploring) {
    return fmt::format("{} {}: call {} of {}",
                       pick.exploring->rechecking ? "measuring again" : "measuring",
                       describe(CallClass::from_key(key)), pick.exploring->exploration.calls() + 1,
                       pick.exploring->exploration.most_calls());
  }
  if (const ClassDecision* d = routes.decided(key)) {
    return fmt::format("{}, {}", describe(CallClass::from_key(key)), decision_words(*d, key));
  }
  return state.policy->choose(query_of(c)).reason;
}

}  // namespace

namespace {

// Takes the decision a blocking call of the class measured, on every rank alike.
void take_decision(const Library& lib, CommState& state, const CollectiveCall& c, std::uint64_t key,
                   MeasuredRoutes::Entry& entry, const ClassDecision& decided) {
  const bool was_multilane = entry.decision && entry.decision->choice == RouteChoice::Multilane;
  entry.settle(decided);
  if (rates_interval(c.call) && !was_multilane && decided.choice == RouteChoice::Multilane) {
    state.routes.measure_mpi_classes_again();
  }
  publish_decision(state.placement, key, *entry.decision);
  if (lib.settings.explain && c.rank == 0) {
    std::fprintf(stderr, "multilane-mpi: %s on %s: %s, %s\n",
                 describe(CallClass::from_key(key)).c_str(), state.placement.words.c_str(),
                 decided.choice == RouteChoice::Mpi ? "MPI library" : "multilane",
                 decision_words(*entry.decision, key).c_str());
  }
}

// Whether a call that goes to the MPI library by a route that lasts may be remembered
// (repeated_calls.hpp). Explained calls are not: each one prints its line. Nor an allgatherv,
// whose class depends on its counts, which the remembered arguments do not hold.
bool rememberable(WrappedCall call) {
  return !library().settings.explain && call != WrappedCall::Allgatherv;
}

// A call without data that nothing forces or explains goes to the MPI library before any
// look-up (a reduce-scatter-block of fewer elements than ranks is one on every call).
bool passes_at_once(const Library& lib, WrappedCall call, const MpiArgs& args) {
  return !lib.settings.explain && unforced_without_data(call, args);
}

// The route of a call with data, or forced, or explained, and the call.
int route_and_run(const Library& lib, WrappedCall call, MPI_Comm comm, const MpiArgs& args,
                  MpiCall mpi) {
  try {
    CommState* state = find_state(comm);
    if (state && state->to_mpi_again.match(call, false, args)) {
      count(Counted::BlockingMpi);
      return mpi(args, comm);
    }
    if (!state) {
      int inter = 0;
      if (PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS || inter) {
        explain_fallback(call, comm, false, "intercommunicator");
        return mpi(args, comm);
      }
      const CallerCpu keep_core;  // finding the layout may sleep, as a served call may
      state = &state_of(comm);
    }
    CollectiveCall& c = state->blocking;
    if (!describe_call(call, comm, args, state->layout.rank, state->layout.size, c)) {
      explain_fallback(call, comm, false, fallback_reason(call));
      if (rememberable(call)) state->to_mpi_again.remember(call, false, args);
      return mpi(args, comm);
    }
    const std::uint64_t key = classify(call, c.block, c.reduction).key();
    const Pick pick = pick_blocking(*state, c, key, !lib.settings.frozen);
    const bool explain_after = lib.settings.explain && explains_after_the_call(c, pick);
    if (lib.settings.explain && pick.run == RouteChoice::Multilane && !state->multilane) {
      const CallerCpu keep_core;
      multilane_of(*state);  // set up now, as the call would, so the line names the algorithm
    }
    if (lib.settings.explain && !explain_after) {
      explain(c, *state, pick, explain_blocking(pick, state->routes, key, c, *state), false);
    } else if (rememberable(call) && pick.run == RouteChoice::Mpi && pick.lasting) {
      state->to_mpi_again.remember(call, false, args);
    }
    // Only an explored call, or one of a steady check, is timed: others cost no clock read.
    const bool timed = pick.exploring || pick.steady;
    const bool slowest = timed && rates_slowest_rank(key);
    if (slowest) start_together(c);
    const auto started =
        timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    int code = MPI_SUCCESS;
    if (pick.run == RouteChoice::Mpi) {
      count(Counted::BlockingMpi);
      code = mpi(args, comm);
    } else {
      count(Counted::BlockingMultilane);
      run_multilane(*state, c, pick.algorithm);
      if (explain_after) {
        explain(c, *state, pick, explain_blocking(pick, state->routes, key, c, *state), false);
      }
    }
    if (timed) {
      MeasuredRoutes::Entry& entry = pick.exploring ? *pick.exploring : *pick.steady;
      const double seconds = entry.rating(call, started, std::chrono::steady_clock::now());
      const Agreement agree{.function = slowest ? agree_slowest : agree_mean, .context = &c};
      const std::optional<ClassDecision> decided = pick.exploring
                                                       ? entry.exploration.record(seconds, agree)
                                                       : entry.record_steady(seconds, agree);
      if (decided) take_decision(lib, *state, c, key, entry, *decided);
    }
    return code;
  } catch (const std::exception& e) {
    return report_failure(comm, call_function(call, false), e);
  }
}

int serve_blocking(const Library& lib, WrappedCall call, MPI_Comm comm, const MpiArgs& args,
                   MpiCall mpi) {
  if (!passes_at_once(lib, call, args)) return route_and_run(lib, call, comm, args, mpi);
  count(Counted::BlockingMpi);
  return mpi(args, comm);
}

int serve_nonblocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args, MPI_Request* request,
                      MpiStart mpi) {
  if (!library().active || comm == MPI_COMM_NULL) return mpi(args, comm, request);
  try {
    CommState* state = find_state(comm);
    if (!state) {
      explain_fallback(call, comm, true,
                       "the communicator is not set up: a nonblocking call never sets it up");
      count(Counted::NonblockingMpi);
      return mpi(args, comm, request);
    }
    auto pending = std::make_unique<PendingCall>();
    pending->call = std::make_unique<CollectiveCall>();
    CollectiveCall& c = *pending->call;
    c.keeps_types = true;
    if (!describe_call(call, comm, args, state->layout.rank, state->layout.size, c)) {
      explain_fallback(call, comm, true, fallback_reason(call));
      count(Counted::NonblockingMpi);
      return mpi(args, comm, request);
    }
    const std::uint64_t key = classify(call, c.block, c.reduction).key();
    Pick pick;
    std::string why;
    if (auto rule = settled(*state, c)) {
      pick = *rule;
    } else if (const ClassDecision* d = state->routes.decided(key)) {
      pick = {.run = d->choice,
              .algorithm = decided_algorithm(*d, state->policy->candidate(call)),
              .lasting = kept_for_the_run(*d)};
    } else {
      // Until a blocking call of the class decides it.
      pick = {.run = state->policy->choose(query_of(c)).multilane ? RouteChoice::Multilane
                                                                  : RouteChoice::Mpi,
              .algorithm = state->policy->candidate(call),
              .lasting = false};
    }
    if (pick.run == RouteChoice::Multilane && !state->multilane) {
      pick = {.run = RouteChoice::Mpi, .lasting = false};
      why = "multilane is not set up on this communicator yet: a nonblocking call never sets it up";
    }
    c.own_counts_only = reads_own_counts(c, pick.algorithm);
    // Counts only some ranks know travel first, on multilane's engine (counts_travel).
    c.counts_travel =
        pick.run == RouteChoice::Multilane && sizes_per_rank(call) && !c.own_counts_only;
    if (library().settings.explain && why.empty()) {
      why = explain_blocking({.run = pick.run}, state->routes, key, c, *state);
      if (c.counts_travel) why += "; its counts travel first, on multilane's engine";
    }
    const bool explain_after = explains_after_the_call(c, pick);
    if (!explain_after) explain(c, *state, pick, why, true);
    if (pick.run == RouteChoice::Mpi) {
      if (pick.lasting && rememberable(call)) state->to_mpi_again.remember(call, true, args);
      count(Counted::NonblockingMpi);
      return mpi(args, comm, request);
    }
    count(Counted::NonblockingMultilane);
    pending->function = call_function(call, true);
    pending->owner = state->multilane;
    const CollectiveOptions options{.algorithm = std::string(pick.algorithm)};
    c.prepare();
    Communicator& multilane = *state->multilane;
    if (c.counts_travel) {
      pending->request =
          multilane.irunv_sharing_counts(carrier(c.call), c.send(), c.recv(), root_of(c),
                                         std::vector(c.counts().begin(), c.counts().end()), options,
                                         explain_when_chosen(c, *state, pick, why));
    } else if (is_v_form(c.call)) {
      if (explain_after) explain(c, *state, pick, why, true);  // its counts are known now
      pending->request = multilane.irunv(carrier(c.call), c.send(), c.recv(), root_of(c),
                                         c.counts(), options, c.reduction);
    } else {
      pending->request = multilane.irun(carrier(c.call), c.send(), c.recv(), root_of(c), c.block,
                                        options, c.reduction);
    }
    *request = start_pending(std::move(pending));
    return MPI_SUCCESS;
  } catch (const std::exception& e) {
    return report_failure(comm, call_function(call, true), e);
  }
}

}  // namespace

int route_blocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args, MpiCall mpi) {
  const Library& lib = library();
  if (!lib.active || comm == MPI_COMM_NULL) return mpi(args, comm);
  if (!lib.settings.profile) return serve_blocking(lib, call, comm, args, mpi);
  const ProfiledCall profiled(call, false);
  return serve_blocking(lib, call, comm, args, mpi);
}

int route_nonblocking(WrappedCall call, MPI_Comm comm, const MpiArgs& args, MPI_Request* request,
                      MpiStart mpi) {
  if (!library().settings.profile) return serve_nonblocking(call, comm, args, request, mpi);
  const ProfiledCall profiled(call, true);
  return serve_nonblocking(call, comm, args, request, mpi);
}

}  // namespace multilane::mpi
