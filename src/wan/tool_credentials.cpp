// wan/tool_credentials.cpp — credentials of the WAN commands (see tool_credentials.hpp).
#include "wan/tool_credentials.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <fstream>

#include "multilane/errors.hpp"

namespace multilane::wan {

channels::Credentials tool_credentials(const std::string& secret_file,
                                       std::optional<std::uint64_t> job_id) {
  channels::Credentials credentials;
  if (!secret_file.empty()) {
    std::ifstream in(secret_file);
    if (!in) throw UsageError(fmt::format("--secret-file: cannot open {}", secret_file));
    std::getline(in, credentials.secret);
    if (credentials.secret.size() < channels::kMinSecretLength) {
      throw UsageError(
          fmt::format("--secret-file: the secret in {} has {} characters, at least {} needed",
                      secret_file, credentials.secret.size(), channels::kMinSecretLength));
    }
    credentials.job_id = job_id_from_environment();
  } else {
    credentials = channels::Credentials::from_environment();
    if (credentials.secret.size() < channels::kMinSecretLength) {
      throw UsageError(fmt::format("MULTILANE_SECRET has {} characters, at least {} needed",
                                   credentials.secret.size(), channels::kMinSecretLength));
    }
  }
  if (job_id) credentials.job_id = *job_id;
  return credentials;
}

}  // namespace multilane::wan
