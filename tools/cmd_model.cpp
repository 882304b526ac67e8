// `multilane model`: closed-form times of algorithms on a platform (same options as `sim`).
#include <memory>

#include "command.hpp"
#include "sweep_command.hpp"

namespace {

const bool model_registered = multilane::cli::register_command(
    {"model", "Closed-form cost models of collective algorithms on a platform",
     [](CLI::App& sub) -> multilane::cli::Runner {
       auto options = std::make_shared<multilane::cli::SweepCli>();
       multilane::cli::add_sweep_options(sub, *options, multilane::cli::SweepEngine::Model);
       return [options] {
         return multilane::cli::run_sweep_command(*options, multilane::cli::SweepEngine::Model);
       };
     }});

}  // namespace
