// mpi/settings.cpp — the PMPI library's variables (settings.hpp).
#include "mpi/settings.hpp"

#include <fmt/format.h>

#include <cctype>
#include <charconv>
#include <cstdlib>

#include "multilane/algorithms.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

std::string variable(const std::string& name) {
  const char* value = std::getenv(name.c_str());
  return value == nullptr ? std::string() : std::string(value);
}

std::string upper(std::string_view text) {
  std::string out(text);
  for (char& c : out) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return out;
}

void check_forced(WrappedCall call, const std::string& name, const std::string& value) {
  if (value == "mpi" || value == "auto") return;
  if (call == WrappedCall::Barrier) {
    throw UsageError(fmt::format("{}={}: must be mpi or auto", name, value));
  }
  if (find_algorithm(carrier(call), value) == nullptr) {
    throw UsageError(fmt::format("{}={}: {}", name, value,
                                 unknown_algorithm_message(carrier(call), value, {"mpi", "auto"})));
  }
}

// A whole number in 0..most.
int parse_count(const std::string& name, const std::string& value, int most) {
  int parsed = -1;
  const auto [end, error] = std::from_chars(value.data(), value.data() + value.size(), parsed);
  if (error != std::errc() || end != value.data() + value.size() || parsed < 0 || parsed > most) {
    throw UsageError(fmt::format("{}={}: must be a whole number from 0 to {}", name, value, most));
  }
  return parsed;
}

constexpr int kMostJobs = 1024;

}  // namespace

Settings Settings::from_environment() {
  Settings settings;
  const std::string mpi = variable("MULTILANE_MPI");
  if (mpi == "off" || mpi == "0") {
    settings.enabled = false;
  } else if (!mpi.empty() && mpi != "on" && mpi != "1") {
    throw UsageError(fmt::format("MULTILANE_MPI={}: must be on or off", mpi));
  }
  const std::string explain = variable("MULTILANE_EXPLAIN");
  if (explain == "1") {
    settings.explain = true;
  } else if (!explain.empty() && explain != "0") {
    throw UsageError(fmt::format("MULTILANE_EXPLAIN={}: must be 0 or 1", explain));
  }
  const std::string profile = variable("MULTILANE_PROFILE");
  if (profile == "1") {
    settings.profile = true;
  } else if (!profile.empty() && profile != "0") {
    throw UsageError(fmt::format("MULTILANE_PROFILE={}: must be 0 or 1", profile));
  }
  settings.tuning_file = variable("MULTILANE_TUNING");
  const std::string mode = variable("MULTILANE_TUNING_MODE");
  if (mode == "frozen") {
    settings.frozen = true;
  } else if (!mode.empty() && mode != "explore") {
    throw UsageError(fmt::format("MULTILANE_TUNING_MODE={}: must be explore or frozen", mode));
  }
  settings.platform_file = variable("MULTILANE_PLATFORM");
  if (const std::string jobs = variable("MULTILANE_MAX_JOBS"); !jobs.empty()) {
    settings.max_jobs = parse_count("MULTILANE_MAX_JOBS", jobs, kMostJobs);
  }
  for (std::size_t i = 0; i < kWrappedCalls; ++i) {
    const auto call = static_cast<WrappedCall>(i);
    const std::string name = "MULTILANE_ALGORITHM_" + upper(call_name(call));
    std::string value = variable(name);
    if (value == "multilane" && find_algorithm(carrier(call), value) == nullptr) value = "auto";
    if (!value.empty()) check_forced(call, name, value);
    settings.forced[i] = value;
  }
  return settings;
}

}  // namespace multilane::mpi
