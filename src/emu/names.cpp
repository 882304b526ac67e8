#include "emu/names.hpp"

#include <fmt/format.h>

#include <regex>

#include "multilane/errors.hpp"

namespace multilane::emu {

namespace {
bool allowed_char(char c) {
  return (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
}
}  // namespace

void check_emulation_name(std::string_view name) {
  bool ok = !name.empty() && name.size() <= 24;
  for (char c : name) ok = ok && allowed_char(c);
  if (!ok) {
    throw UsageError(fmt::format(
        "emulation name \"{}\" is not allowed: use 1 to 24 characters of A-Z a-z 0-9 _", name));
  }
}

std::string node_netns(std::string_view name, int node) {
  return fmt::format("ml-{}-n{}", name, node);
}
std::string site_netns(std::string_view name, int site) {
  return fmt::format("ml-{}-s{}", name, site);
}

bool is_netns_of(std::string_view name, std::string_view netns) {
  const std::string prefix = fmt::format("ml-{}-", name);
  if (netns.substr(0, prefix.size()) != prefix) return false;
  static const std::regex suffix("[ns](0|[1-9][0-9]*)");
  return std::regex_match(netns.begin() + static_cast<long>(prefix.size()), netns.end(), suffix);
}

std::string run_dir(std::string_view name) {
  return fmt::format("{}/{}", kRunRoot, name);
}
std::string plan_path(std::string_view name) {
  return run_dir(name) + "/plan.json";
}
std::string delay_line_pid_path(std::string_view name, int wan) {
  return fmt::format("{}/wan{}.pid", run_dir(name), wan);
}
std::string delay_line_counters_path(std::string_view name, int wan) {
  return fmt::format("{}/wan{}.counters", run_dir(name), wan);
}
std::string delay_line_log_path(std::string_view name, int wan) {
  return fmt::format("{}/wan{}.log", run_dir(name), wan);
}

}  // namespace multilane::emu
