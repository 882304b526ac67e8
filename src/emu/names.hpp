// emu/names.hpp — names and paths of an emulation called NAME.
//
// Namespaces are ml-NAME-n<node> and ml-NAME-s<site>; NAME is [A-Za-z0-9_]{1,24}, so no
// emulation's names are a prefix-match of another's. State lives in /run/multilane/NAME/.
#pragma once

#include <string>
#include <string_view>

namespace multilane::emu {

inline constexpr std::string_view kRunRoot = "/run/multilane";
inline constexpr std::string_view kNetnsRoot = "/run/netns";

// Throws UsageError: `emulation name "a-b" is not allowed: use 1 to 24 of A-Z a-z 0-9 _`.
void check_emulation_name(std::string_view name);

std::string node_netns(std::string_view name, int node);
std::string site_netns(std::string_view name, int site);
// True when `netns` is one of the namespaces of emulation `name`.
bool is_netns_of(std::string_view name, std::string_view netns);

std::string run_dir(std::string_view name);  // /run/multilane/NAME
std::string plan_path(std::string_view name);
std::string delay_line_pid_path(std::string_view name, int wan);
std::string delay_line_counters_path(std::string_view name, int wan);
std::string delay_line_log_path(std::string_view name, int wan);

}  // namespace multilane::emu
