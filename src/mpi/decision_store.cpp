// mpi/decision_store.cpp — routes by placement, loaded from and saved to the tuning file
// (decision_store.hpp).
#include "mpi/decision_store.hpp"

#include <mpi.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <mutex>
#include <sstream>

#include "mpi/pmpi_check.hpp"
#include "mpi/route_tuning.hpp"

#ifndef MULTILANE_VERSION
#define MULTILANE_VERSION "unknown"
#endif

namespace multilane::mpi {

namespace {

struct Store {
  std::mutex mutex;
  RouteTuning tuning;
  bool changed = false;
  std::string mpi_library;
};

Store& store() {
  static Store instance;
  return instance;
}

// The first line of PMPI_Get_library_version: "Open MPI v4.1.4, package: ...".
std::string mpi_library_version() {
  char text[MPI_MAX_LIBRARY_VERSION_STRING] = {};
  int length = 0;
  if (PMPI_Get_library_version(text, &length) != MPI_SUCCESS) return "unknown";
  std::string version(text, static_cast<std::size_t>(length));
  if (const auto end = version.find_first_of("\r\n"); end != std::string::npos) version.resize(end);
  while (!version.empty() && (version.back() == ' ' || version.back() == '\0')) version.pop_back();
  return version;
}

// Rank 0's file text on every rank ("" when rank 0 has no such file).
std::string broadcast_file(const std::string& path) {
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  std::string text;
  long long length = 0;
  if (rank == 0) {
    std::ifstream in(path, std::ios::binary);
    if (in) {
      std::ostringstream all;
      all << in.rdbuf();
      text = all.str();
    }
    length = static_cast<long long>(text.size());
  }
  pmpi_check(PMPI_Bcast(&length, 1, MPI_LONG_LONG, 0, MPI_COMM_WORLD), "PMPI_Bcast");
  text.resize(static_cast<std::size_t>(length));
  if (length > 0) {
    pmpi_check(PMPI_Bcast(text.data(), static_cast<int>(length), MPI_CHAR, 0, MPI_COMM_WORLD),
               "PMPI_Bcast");
  }
  return text;
}

PlacementRoutes* find(Store& s, const PlacementKey& placement) {
  for (PlacementRoutes& p : s.tuning.placements) {
    if (p.mpi_library == s.mpi_library && p.multilane_version == MULTILANE_VERSION &&
        p.fingerprint == placement.fingerprint && p.ranks == placement.ranks) {
      return &p;
    }
  }
  return nullptr;
}

}  // namespace

void load_decisions(const std::string& path) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  s.mpi_library = mpi_library_version();
  if (path.empty()) return;
  s.tuning = parse_route_tuning(broadcast_file(path), path);
}

void inherit_decisions(const PlacementKey& placement, MeasuredRoutes& routes) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  if (const PlacementRoutes* p = find(s, placement)) {
    for (const auto& [key, decision] : p->classes) routes.adopt(key, decision);
  }
}

namespace {

// publish_decision() with the store's lock held.
void publish_locked(Store& s, const PlacementKey& placement, std::uint64_t key,
                    const ClassDecision& decision) {
  PlacementRoutes* p = find(s, placement);
  if (!p) {
    s.tuning.placements.push_back({.mpi_library = s.mpi_library,
                                   .multilane_version = MULTILANE_VERSION,
                                   .placement = placement.words,
                                   .fingerprint = placement.fingerprint,
                                   .ranks = placement.ranks,
                                   .classes = {}});
    p = &s.tuning.placements.back();
  }
  // A class measured again takes the new measurement's route, times and source; while its route
  // stays, it keeps the calls counted on that route, which time its next re-measurement. An
  // unfinished exploration brings its own count.
  ClassDecision published = decision;
  const auto known = p->classes.find(key);
  if (known != p->classes.end() && known->second.choice == decision.choice &&
      decision.source != DecisionSource::Unfinished) {
    published.calls = known->second.calls;
  }
  p->classes.insert_or_assign(key, published);
  s.changed = true;
}

// Whether the calls of a class on `d` are counted for a measurement to come.
bool counts_calls(const ClassDecision& d) {
  return d.choice == RouteChoice::Multilane || d.source == DecisionSource::Unfinished;
}

}  // namespace

void publish_decision(const PlacementKey& placement, std::uint64_t key,
                      const ClassDecision& decision) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  publish_locked(s, placement, key, decision);
}

void count_route_calls(const PlacementKey& placement, const MeasuredRoutes& routes) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  for (const auto& [key, entry] : routes.entries()) {
    // An exploration the run ended: the MPI library's until a later count (a decision of
    // another communicator of the placement stands).
    const auto unfinished = entry.unfinished();
    if (!unfinished) continue;
    if (const PlacementRoutes* p = find(s, placement)) {
      const auto known = p->classes.find(key);
      if (known != p->classes.end() && known->second.source != DecisionSource::Unfinished) continue;
    }
    publish_locked(s, placement, key, *unfinished);
  }
  PlacementRoutes* p = find(s, placement);
  if (!p) return;
  for (const auto& [key, entry] : routes.entries()) {
    if (!entry.decision || !counts_calls(*entry.decision)) continue;
    const std::uint64_t made = entry.calls_this_run();
    const auto known = p->classes.find(key);
    if (made == 0 || known == p->classes.end() || !counts_calls(known->second)) continue;
    known->second.calls += made;
    s.changed = true;
  }
}

void save_decisions(const std::string& path) {
  Store& s = store();
  std::lock_guard lock(s.mutex);
  int rank = 0;
  PMPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (path.empty() || rank != 0 || !s.changed) return;
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << format_route_tuning(s.tuning);
    if (!out.flush()) {
      std::fprintf(stderr, "multilane: cannot write the tuning file %s\n", temporary.c_str());
      return;
    }
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::fprintf(stderr, "multilane: cannot write the tuning file %s: %s\n", path.c_str(),
                 error.message().c_str());
  }
  s.changed = false;
}

}  // namespace multilane::mpi
