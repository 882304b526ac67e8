// emu/state.hpp — an emulation's files under /run/multilane/NAME/.
//
// `up` claims the name by creating the directory (atomic: a second `up` finds it), writes
// plan.json before building anything (so `down` knows what to remove even after a crash)
// and `complete` when everything runs. Delay lines add wan<i>.pid, .counters and .log.
#pragma once

#include <string>
#include <string_view>

#include "emu/plan.hpp"

namespace multilane::emu {

bool state_exists(std::string_view name);
// Creates /run/multilane/NAME; throws EmuError "already up" when it exists.
void claim_state(std::string_view name);
void save_plan(const Plan& plan);
// Throws EmuError `emulation "NAME" is not up` when there is no plan.
Plan load_plan(std::string_view name);
void mark_complete(std::string_view name);
bool is_complete(std::string_view name);
// Removes the directory and everything in it, then /run/multilane when it is empty.
void remove_state(std::string_view name);
// Writes `text` to `path` through a temporary file and rename (readers never see half).
void write_file_atomically(const std::string& path, const std::string& text);

}  // namespace multilane::emu
