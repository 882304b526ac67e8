// wan/mpwide/job_secret.cpp — MULTILANE_SECRET or ~/.config/multilane/secret (job_secret.hpp).
#include "wan/mpwide/job_secret.hpp"

#include <fmt/format.h>
#include <sys/stat.h>

#include <cstdlib>
#include <fstream>
#include <string>

#include "multilane/errors.hpp"
#include "wan/tool_credentials.hpp"

namespace multilane::wan::mpwide {

namespace {

std::string secret_file_path() {
  const char* home = std::getenv("HOME");
  return std::string(home != nullptr ? home : "") + "/.config/multilane/secret";
}

std::string what_to_set(const std::string& file) {
  return fmt::format(
      "set MULTILANE_SECRET to the job's secret (at least {} characters, the same at every end), "
      "or write it to {} (mode 0600)",
      channels::kMinSecretLength, file);
}

std::string read_secret_file(const std::string& file) {
  struct stat info {};
  if (::stat(file.c_str(), &info) != 0) {
    throw UsageError(fmt::format("no job secret: {}", what_to_set(file)));
  }
  if (!S_ISREG(info.st_mode)) throw UsageError(fmt::format("{} is not a regular file", file));
  if ((info.st_mode & 077) != 0) {
    throw UsageError(
        fmt::format("{} has mode {:04o}: others may read the job's secret; run chmod 600 {}", file,
                    info.st_mode & 07777, file));
  }
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) throw UsageError(fmt::format("cannot read {}", file));
  if (!line.empty() && line.back() == '\r') line.pop_back();
  if (line.size() < channels::kMinSecretLength) {
    throw UsageError(fmt::format("the secret in {} has {} characters, at least {} are needed", file,
                                 line.size(), channels::kMinSecretLength));
  }
  return line;
}

}  // namespace

channels::Credentials find_credentials() {
  channels::Credentials credentials;
  const char* secret = std::getenv("MULTILANE_SECRET");
  if (secret != nullptr && *secret != '\0') {
    credentials.secret = secret;
    if (credentials.secret.size() < channels::kMinSecretLength) {
      throw UsageError(fmt::format("MULTILANE_SECRET has {} characters, at least {} are needed",
                                   credentials.secret.size(), channels::kMinSecretLength));
    }
  } else {
    credentials.secret = read_secret_file(secret_file_path());
  }
  credentials.job_id = job_id_from_environment();
  return credentials;
}

}  // namespace multilane::wan::mpwide
