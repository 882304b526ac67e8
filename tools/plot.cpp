// tools/plot.cpp — see plot.hpp.
#include "plot.hpp"

#include <fmt/format.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <stdexcept>

#include "exec_command.hpp"

namespace multilane::cli {

namespace {

std::string plot_script() {
  const auto exe = this_program();
  for (const auto& base : {exe.parent_path().parent_path(), std::filesystem::current_path()}) {
    const auto p = base / "scripts" / "plot.py";
    if (std::filesystem::exists(p)) return p.string();
  }
  throw std::runtime_error("cannot find scripts/plot.py (next to the build directory or in .)");
}

}  // namespace

void run_plot(const std::string& json_text, const std::string& png, const std::string& title) {
  const std::string data = png + ".data.json";
  std::ofstream(data) << json_text;
  const std::string cmd =
      fmt::format("/usr/bin/python3 '{}' '{}' '{}' --title '{}'", plot_script(), data, png, title);
  const int status = std::system(cmd.c_str());
  std::filesystem::remove(data);
  if (status != 0) throw std::runtime_error(fmt::format("plotting failed: {}", cmd));
}

}  // namespace multilane::cli
