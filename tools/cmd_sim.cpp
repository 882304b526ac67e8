// `multilane sim`: simulate algorithms on a platform (see tools/sweep_command.hpp for options).
#include <memory>

#include "command.hpp"
#include "sweep_command.hpp"

namespace {

const bool sim_registered = multilane::cli::register_command(
    {"sim", "Simulate collective algorithms on a platform (flow-level, discrete-event)",
     [](CLI::App& sub) -> multilane::cli::Runner {
       auto options = std::make_shared<multilane::cli::SweepCli>();
       multilane::cli::add_sweep_options(sub, *options, multilane::cli::SweepEngine::Simulator);
       return [options] {
         return multilane::cli::run_sweep_command(*options, multilane::cli::SweepEngine::Simulator);
       };
     }});

}  // namespace
