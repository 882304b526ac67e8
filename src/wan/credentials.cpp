// wan/credentials.cpp — the job's credentials from the environment (see channels.hpp).
#include <fmt/format.h>

#include <charconv>
#include <cstdlib>
#include <string_view>

#include "multilane/channels.hpp"
#include "multilane/errors.hpp"
#include "wan/tool_credentials.hpp"

namespace multilane::wan {

std::uint64_t job_id_from_environment() {
  const char* job = std::getenv("MULTILANE_JOB_ID");
  if (job == nullptr || *job == '\0') return 0;
  const std::string_view text(job);
  std::uint64_t id = 0;
  const auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), id);
  if (ec != std::errc{} || end != text.data() + text.size()) {
    throw UsageError(fmt::format("MULTILANE_JOB_ID={} is not a decimal number of 0..2^64-1", text));
  }
  return id;
}

}  // namespace multilane::wan

namespace multilane::channels {

Credentials Credentials::from_environment() {
  Credentials credentials;
  const char* secret = std::getenv("MULTILANE_SECRET");
  if (secret == nullptr || *secret == '\0') {
    throw UsageError(fmt::format(
        "MULTILANE_SECRET is not set: every end needs the job's secret (at least {} characters)",
        kMinSecretLength));
  }
  credentials.secret = secret;
  credentials.job_id = wan::job_id_from_environment();
  return credentials;
}

}  // namespace multilane::channels
