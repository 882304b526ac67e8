#include "emu/state.hpp"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <sstream>

#include "emu/names.hpp"

namespace multilane::emu {

namespace {
std::string complete_path(std::string_view name) {
  return run_dir(name) + "/complete";
}
}  // namespace

bool state_exists(std::string_view name) {
  struct stat st;
  return stat(run_dir(name).c_str(), &st) == 0;
}

void claim_state(std::string_view name) {
  if (mkdir(std::string(kRunRoot).c_str(), 0755) != 0 && errno != EEXIST) {
    throw EmuError(fmt::format("cannot create {}: {}", kRunRoot, std::strerror(errno)));
  }
  if (mkdir(run_dir(name).c_str(), 0755) == 0) return;
  if (errno == EEXIST) {
    throw EmuError(
        ErrorKind::usage,
        fmt::format("emulation \"{0}\" is already up{1}; run `multilane emu down --name {0}` first",
                    name, is_complete(name) ? "" : " (or a previous `up` did not finish)"));
  }
  throw EmuError(fmt::format("cannot create {}: {}", run_dir(name), std::strerror(errno)));
}

void write_file_atomically(const std::string& path, const std::string& text) {
  const std::string temporary = path + ".tmp";
  {
    std::ofstream out(temporary, std::ios::binary | std::ios::trunc);
    out << text;
    out.flush();
    if (!out) throw EmuError(fmt::format("cannot write {}: {}", temporary, std::strerror(errno)));
  }
  if (std::rename(temporary.c_str(), path.c_str()) != 0) {
    throw EmuError(
        fmt::format("cannot rename {} to {}: {}", temporary, path, std::strerror(errno)));
  }
}

void save_plan(const Plan& plan) {
  write_file_atomically(plan_path(plan.name), plan_to_json(plan).dump(2) + "\n");
}

Plan load_plan(std::string_view name) {
  std::ifstream in(plan_path(name));
  if (!in) throw EmuError(ErrorKind::usage, fmt::format("emulation \"{}\" is not up", name));
  std::stringstream text;
  text << in.rdbuf();
  const auto json = nlohmann::json::parse(text.str(), nullptr, /*allow_exceptions=*/false);
  if (json.is_discarded()) {
    throw EmuError(fmt::format("{}: not valid JSON; run `multilane emu down --name {}`",
                               plan_path(name), name));
  }
  return plan_from_json(json);
}

void mark_complete(std::string_view name) {
  write_file_atomically(complete_path(name), "up\n");
}

bool is_complete(std::string_view name) {
  struct stat st;
  return stat(complete_path(name).c_str(), &st) == 0;
}

void remove_state(std::string_view name) {
  std::error_code ignored;
  std::filesystem::remove_all(run_dir(name), ignored);
  rmdir(std::string(kRunRoot).c_str());  // only succeeds when no other emulation is left
}

}  // namespace multilane::emu
