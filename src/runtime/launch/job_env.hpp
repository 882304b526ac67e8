// runtime/launch/job_env.hpp — the environment contract every rank of a job reads at start-up.
//
// Any launcher can start a multilane job: `multilane launch`, Open MPI's `mpirun`, or a loop
// of `ssh` commands. It only has to give every process these variables (docs/launching.md):
//
//   MULTILANE_RANK, MULTILANE_SIZE   this process's rank and the number of ranks; when both are
//                                    absent, OMPI_COMM_WORLD_RANK/_SIZE (mpirun), then
//                                    PMI_RANK/PMI_SIZE are read; none at all = rank 0 of 1
//   MULTILANE_RENDEZVOUS             "host:port" of the key-value store (rendezvous.hpp)
//   MULTILANE_RENDEZVOUS_SERVER      "rank0": rank 0 serves the store itself at that address;
//                                    "external" (default): someone else serves it (a launcher)
//   MULTILANE_JOB_ID                 decimal u64, the same on every rank (default: derived
//                                    from the rendezvous address)
//   MULTILANE_SECRET                 text, the same on every rank, at least 16 characters;
//                                    required when MULTILANE_SIZE > 1
//   MULTILANE_PLATFORM               platform TOML file (default: none)
//   MULTILANE_TIMEOUT                seconds > 0 every blocking wait may last (default 60)
//   MULTILANE_EXPLAIN                0 or 1: rank 0 explains each collective's choice
//
// Every other MULTILANE_* variable is kept in `settings` (name without the prefix) for later
// layers. A bad value throws multilane::UsageError naming the variable, its value and what is
// allowed, e.g. "MULTILANE_RANK=7 is out of range: must be 0..3 (MULTILANE_SIZE=4)".
#pragma once

#include <chrono>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace multilane::runtime {

// The largest job the contract accepts (MULTILANE_SIZE and friends).
inline constexpr int kMaxJobSize = 1 << 22;
// The shortest MULTILANE_SECRET accepted: a short text would be easy to guess.
inline constexpr std::size_t kMinSecretLength = 16;

struct JobEnvironment {
  int rank = 0;
  int size = 1;
  std::string rendezvous;         // "host:port" of the key-value store; empty for a lone process
  bool serve_rendezvous = false;  // this process (rank 0) serves the store itself
  std::uint64_t job_id = 0;
  std::string secret;         // text; the runtime derives the key with JobSecret::from_text
  std::string platform_file;  // empty: no platform file
  std::chrono::milliseconds timeout{60'000};
  bool explain = false;
  // Every other MULTILANE_* variable, name without prefix, for later layers.
  std::map<std::string, std::string> settings;

  // Reads the process environment.
  static JobEnvironment from_environment();
  // Reads `variables` (name -> value) as if they were the environment; variables that belong to
  // neither the contract nor MULTILANE_* are ignored.
  static JobEnvironment from_variables(const std::map<std::string, std::string>& variables);
  // The variables that make from_variables() give back this environment (what a launcher
  // exports); empty strings are left out.
  std::vector<std::pair<std::string, std::string>> to_environment() const;

  friend bool operator==(const JobEnvironment&, const JobEnvironment&) = default;
};

// Names of the contract's variables (not kept in `settings`).
bool is_contract_variable(std::string_view name);

// A number of seconds > 0 as written by people ("60", "0.5"), in milliseconds (at least 1).
// Throws UsageError("must be a number of seconds > 0 ...") without naming the source, so
// callers prefix the variable or option it came from.
std::chrono::milliseconds parse_timeout_seconds(std::string_view text);
// Milliseconds as the seconds text parse_timeout_seconds() reads back ("60", "0.25").
std::string timeout_seconds_text(std::chrono::milliseconds timeout);

// "host:port" split; throws UsageError when it is not of that form (port 1..65535; an IPv6
// host is written in brackets, "[::1]:4000").
struct HostPort {
  std::string host;
  std::uint16_t port = 0;
};
HostPort parse_host_port(std::string_view text);
// The inverse: "host:port", with the host in brackets when it is an IPv6 address.
std::string host_port_text(std::string_view host, std::uint16_t port);

}  // namespace multilane::runtime
