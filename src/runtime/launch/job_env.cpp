// runtime/launch/job_env.cpp — reading and writing the job's environment contract (see
// job_env.hpp).
#include "runtime/launch/job_env.hpp"

#include <fmt/format.h>

#include <array>
#include <charconv>
#include <cmath>
#include <optional>

#include "multilane/errors.hpp"

extern char** environ;  // POSIX: the process environment

namespace multilane::runtime {

namespace {

constexpr std::string_view kPrefix = "MULTILANE_";
constexpr double kMaxTimeoutSeconds = 1e7;

constexpr std::array<std::string_view, 9> kContractVariables = {
    "MULTILANE_RANK",   "MULTILANE_SIZE",   "MULTILANE_RENDEZVOUS", "MULTILANE_RENDEZVOUS_SERVER",
    "MULTILANE_JOB_ID", "MULTILANE_SECRET", "MULTILANE_PLATFORM",   "MULTILANE_TIMEOUT",
    "MULTILANE_EXPLAIN"};

// Where rank and size come from, in order of preference: our own contract, Open MPI's mpirun,
// then any PMI-based launcher (MPICH's hydra, Slurm's srun --mpi=pmi2).
struct RankSource {
  std::string_view rank;
  std::string_view size;
};
constexpr std::array<RankSource, 3> kRankSources = {
    {{"MULTILANE_RANK", "MULTILANE_SIZE"},
     {"OMPI_COMM_WORLD_RANK", "OMPI_COMM_WORLD_SIZE"},
     {"PMI_RANK", "PMI_SIZE"}}};

using Variables = std::map<std::string, std::string>;

std::optional<std::string> lookup(const Variables& variables, std::string_view name) {
  const auto it = variables.find(std::string(name));
  if (it == variables.end()) return std::nullopt;
  return it->second;
}

// A whole decimal number, nothing else around it.
template <typename Int>
std::optional<Int> parse_whole(std::string_view text) {
  Int value{};
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size()) return std::nullopt;
  return value;
}

[[noreturn]] void reject(std::string_view name, std::string_view value, std::string_view problem,
                         std::string_view allowed) {
  throw UsageError(fmt::format("{}={} {}: {}", name, value, problem, allowed));
}

int read_size(std::string_view name, const std::string& text) {
  const std::string allowed = fmt::format("must be 1..{}", kMaxJobSize);
  const auto size = parse_whole<long long>(text);
  if (!size) reject(name, text, "is not a whole number", allowed);
  if (*size < 1 || *size > kMaxJobSize) reject(name, text, "is out of range", allowed);
  return static_cast<int>(*size);
}

int read_rank(std::string_view name, const std::string& text, std::string_view size_name,
              int size) {
  const std::string allowed = fmt::format("must be 0..{} ({}={})", size - 1, size_name, size);
  const auto rank = parse_whole<long long>(text);
  if (!rank) reject(name, text, "is not a whole number", allowed);
  if (*rank < 0 || *rank >= size) reject(name, text, "is out of range", allowed);
  return static_cast<int>(*rank);
}

// Rank and size from the first source that sets either of its two variables.
void read_rank_and_size(const Variables& variables, JobEnvironment& env) {
  for (const RankSource& source : kRankSources) {
    const auto rank = lookup(variables, source.rank);
    const auto size = lookup(variables, source.size);
    if (!rank && !size) continue;
    if (!rank || !size) {
      const auto [set, unset] =
          rank ? std::pair(source.rank, source.size) : std::pair(source.size, source.rank);
      throw UsageError(
          fmt::format("{} is set but {} is not: set both, or neither for a lone "
                      "process (rank 0 of 1)",
                      set, unset));
    }
    env.size = read_size(source.size, *size);
    env.rank = read_rank(source.rank, *rank, source.size, env.size);
    return;
  }
}

void read_rendezvous(const Variables& variables, JobEnvironment& env) {
  env.rendezvous = lookup(variables, "MULTILANE_RENDEZVOUS").value_or("");
  if (!env.rendezvous.empty()) {
    HostPort address;
    try {
      address = parse_host_port(env.rendezvous);
    } catch (const UsageError& e) {
      reject("MULTILANE_RENDEZVOUS", env.rendezvous, "is not allowed", e.what());
    }
    if (address.port == 0) {
      reject("MULTILANE_RENDEZVOUS", env.rendezvous, "is not allowed",
             "port 0 cannot be reached: give the port the store listens on");
    }
  }
  const std::string server = lookup(variables, "MULTILANE_RENDEZVOUS_SERVER").value_or("external");
  if (server != "rank0" && server != "external") {
    reject("MULTILANE_RENDEZVOUS_SERVER", server, "is not allowed",
           "must be rank0 (rank 0 serves the store) or external (a launcher serves it)");
  }
  if (server == "rank0" && env.rendezvous.empty()) {
    throw UsageError(
        "MULTILANE_RENDEZVOUS_SERVER=rank0 needs MULTILANE_RENDEZVOUS=host:port, the address at "
        "which rank 0 serves the store");
  }
  env.serve_rendezvous = server == "rank0" && env.rank == 0;
}

// FNV-1a: every rank derives the same job id from the same rendezvous address, so a job
// started by hand needs no MULTILANE_JOB_ID. Not a secret (the handshake sends it in clear).
std::uint64_t job_id_of(std::string_view rendezvous) {
  std::uint64_t hash = 0xcbf29ce484222325ull;
  for (const char c : rendezvous) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 0x100000001b3ull;
  }
  return hash;
}

void read_job_id(const Variables& variables, JobEnvironment& env) {
  const auto text = lookup(variables, "MULTILANE_JOB_ID");
  if (!text) {
    env.job_id = env.rendezvous.empty() ? 0 : job_id_of(env.rendezvous);
    return;
  }
  const auto id = parse_whole<std::uint64_t>(*text);
  if (!id) {
    reject("MULTILANE_JOB_ID", *text, "is not allowed",
           "must be a whole number 0..18446744073709551615, the same on every rank");
  }
  env.job_id = *id;
}

void read_secret(const Variables& variables, JobEnvironment& env) {
  env.secret = lookup(variables, "MULTILANE_SECRET").value_or("");
  if (env.secret.empty() && env.size > 1) {
    throw UsageError(fmt::format(
        "a job of {} ranks needs a secret: set MULTILANE_SECRET to the same random text of at "
        "least {} characters on every rank, e.g. MULTILANE_SECRET=$(head -c 24 /dev/urandom | "
        "base64) (multilane launch sets it for you)",
        env.size, kMinSecretLength));
  }
  if (!env.secret.empty() && env.secret.size() < kMinSecretLength) {
    throw UsageError(fmt::format(
        "MULTILANE_SECRET is too short ({} characters): use at least {} random characters, "
        "e.g. MULTILANE_SECRET=$(head -c 24 /dev/urandom | base64)",
        env.secret.size(), kMinSecretLength));
  }
}

void read_options(const Variables& variables, JobEnvironment& env) {
  env.platform_file = lookup(variables, "MULTILANE_PLATFORM").value_or("");
  if (const auto timeout = lookup(variables, "MULTILANE_TIMEOUT")) {
    try {
      env.timeout = parse_timeout_seconds(*timeout);
    } catch (const UsageError& e) {
      reject("MULTILANE_TIMEOUT", *timeout, "is not allowed", e.what());
    }
  }
  if (const auto explain = lookup(variables, "MULTILANE_EXPLAIN")) {
    if (*explain != "0" && *explain != "1") {
      reject("MULTILANE_EXPLAIN", *explain, "is not allowed", "must be 0 or 1");
    }
    env.explain = *explain == "1";
  }
}

void read_settings(const Variables& variables, JobEnvironment& env) {
  for (const auto& [name, value] : variables) {
    if (name.size() > kPrefix.size() && name.starts_with(kPrefix) && !is_contract_variable(name)) {
      env.settings.emplace(name.substr(kPrefix.size()), value);
    }
  }
}

}  // namespace

bool is_contract_variable(std::string_view name) {
  for (const std::string_view v : kContractVariables) {
    if (v == name) return true;
  }
  return false;
}

JobEnvironment JobEnvironment::from_variables(const Variables& variables) {
  JobEnvironment env;
  read_rank_and_size(variables, env);
  read_rendezvous(variables, env);
  if (env.size > 1 && env.rendezvous.empty()) {
    throw UsageError(fmt::format(
        "a job of {} ranks needs MULTILANE_RENDEZVOUS=host:port, the key-value store where the "
        "ranks meet (multilane launch sets it; for mpirun and ssh see docs/launching.md)",
        env.size));
  }
  read_job_id(variables, env);
  read_secret(variables, env);
  read_options(variables, env);
  read_settings(variables, env);
  return env;
}

JobEnvironment JobEnvironment::from_environment() {
  Variables variables;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    const std::string_view text(*entry);
    const auto equals = text.find('=');
    if (equals == std::string_view::npos) continue;
    variables.emplace(std::string(text.substr(0, equals)), std::string(text.substr(equals + 1)));
  }
  return from_variables(variables);
}

std::vector<std::pair<std::string, std::string>> JobEnvironment::to_environment() const {
  std::vector<std::pair<std::string, std::string>> out = {
      {"MULTILANE_RANK", std::to_string(rank)},
      {"MULTILANE_SIZE", std::to_string(size)},
      {"MULTILANE_JOB_ID", std::to_string(job_id)},
      {"MULTILANE_TIMEOUT", timeout_seconds_text(timeout)},
      {"MULTILANE_EXPLAIN", explain ? "1" : "0"}};
  if (!rendezvous.empty()) out.emplace_back("MULTILANE_RENDEZVOUS", rendezvous);
  if (serve_rendezvous) out.emplace_back("MULTILANE_RENDEZVOUS_SERVER", "rank0");
  if (!secret.empty()) out.emplace_back("MULTILANE_SECRET", secret);
  if (!platform_file.empty()) out.emplace_back("MULTILANE_PLATFORM", platform_file);
  for (const auto& [name, value] : settings) out.emplace_back(std::string(kPrefix) + name, value);
  return out;
}

std::chrono::milliseconds parse_timeout_seconds(std::string_view text) {
  double seconds = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), seconds);
  if (text.empty() || error != std::errc{} || end != text.data() + text.size() ||
      !std::isfinite(seconds) || seconds <= 0 || seconds > kMaxTimeoutSeconds) {
    throw UsageError(fmt::format(
        "must be a number of seconds > 0 and at most {:.0f} (e.g. 60 or 0.5)", kMaxTimeoutSeconds));
  }
  const auto ms = std::llround(seconds * 1000.0);  // shortest text round-trips exactly
  return std::chrono::milliseconds{std::max(ms, 1LL)};
}

std::string timeout_seconds_text(std::chrono::milliseconds timeout) {
  return fmt::format("{}", static_cast<double>(timeout.count()) / 1000.0);
}

HostPort parse_host_port(std::string_view text) {
  const auto problem = [&](std::string_view why) {
    return UsageError(fmt::format("\"{}\" is not host:port ({})", text, why));
  };
  const auto colon = text.rfind(':');
  if (colon == std::string_view::npos) throw problem("no port");
  std::string_view host = text.substr(0, colon);
  if (host.starts_with('[') && host.ends_with(']')) {
    host = host.substr(1, host.size() - 2);
  } else if (host.find(':') != std::string_view::npos) {
    throw problem("write an IPv6 address in brackets, [::1]:4000");
  }
  if (host.empty()) throw problem("no host");
  const auto port = parse_whole<unsigned>(text.substr(colon + 1));
  if (!port || *port > 65535) throw problem("the port must be 0..65535");
  return {std::string(host), static_cast<std::uint16_t>(*port)};
}

std::string host_port_text(std::string_view host, std::uint16_t port) {
  if (host.find(':') != std::string_view::npos) return fmt::format("[{}]:{}", host, port);
  return fmt::format("{}:{}", host, port);
}

}  // namespace multilane::runtime
