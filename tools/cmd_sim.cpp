// `multilane sim`: simulate algorithms on a platform (see src/sim/sweep_cli.hpp for options).
#include <memory>

#include "command.hpp"
#include "sim/sweep_cli.hpp"

namespace {

const bool registered = multilane::cli::register_command(
    {"sim", "Simulate collective algorithms on a platform (flow-level, discrete-event)",
     [](CLI::App& sub) -> multilane::cli::Runner {
       auto options = std::make_shared<multilane::sim::SweepCli>();
       multilane::sim::add_sweep_options(sub, *options, true);
       return [options] { return multilane::sim::run_sweep_command(*options, true); };
     }});

}  // namespace
