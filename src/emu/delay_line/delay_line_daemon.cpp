// The `multilane emu delay-line` daemon around a DelayLine (see delay_line.hpp).
#include <fmt/format.h>
#include <sched.h>
#include <signal.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <ctime>
#include <exception>

#include "emu/delay_line/delay_line.hpp"
#include "emu/delay_line/tap.hpp"
#include "emu/names.hpp"
#include "emu/state.hpp"
#include "multilane/emu.hpp"
#include "multilane/units.hpp"

namespace multilane::emu {

namespace {

std::atomic<bool> stop_requested{false};

extern "C" void request_stop(int) {
  stop_requested.store(true);
}

// SIGTERM and SIGINT stay blocked except while the delay line waits (it unblocks them in its
// ppoll), so a stop request can never fall between checking the flag and going to sleep.
void install_stop_handlers() {
  struct sigaction action {};
  action.sa_handler = request_stop;
  sigemptyset(&action.sa_mask);
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGTERM);
  sigaddset(&stop_signals, SIGINT);
  sigprocmask(SIG_BLOCK, &stop_signals, nullptr);
}

void log_line(const std::string& text) {
  const std::time_t now = std::time(nullptr);
  char stamp[32];
  std::strftime(stamp, sizeof stamp, "%F %T", std::localtime(&now));
  std::fprintf(stderr, "%s %s\n", stamp, text.c_str());
  std::fflush(stderr);
}

std::string summary(const DirectionCounters& c) {
  return fmt::format(
      "in {} frames ({} B), out {} ({} B), filtered {}, drops queue {} loss {} "
      "memory {}, write errors {}, max queue {} B",
      c.frames_in.load(), c.bytes_in.load(), c.frames_out.load(), c.bytes_out.load(),
      c.filtered.load(), c.drops_queue.load(), c.drops_loss.load(), c.drops_memory.load(),
      c.write_errors.load(), c.max_queue_bytes.load());
}

// Frames are due at exact times; on a busy machine a normal thread wakes up milliseconds
// late. A real-time priority makes the line preempt other work when a frame is due (it sleeps
// otherwise; the kernel's RT throttling still leaves others 5% of every second).
void raise_priority() {
  sched_param param{};
  param.sched_priority = 50;
  if (sched_setscheduler(0, SCHED_FIFO, &param) != 0) {
    log_line(fmt::format("note: no real-time priority ({}); frames may leave late under load",
                         std::strerror(errno)));
  }
}

DelayLineSpec spec_of(const Plan& plan, const WanPlan& wan) {
  return {{wan.site_a, wan.site_b},
          wan.bps,
          wan.latency_s,
          wan.queue_bytes,
          wan.loss,
          wan.seed,
          plan.mtu,
          static_cast<std::uint32_t>(wan.tcp_window_bytes)};
}

}  // namespace

int run_delay_line_daemon(const std::string& name, int wan_index, int ready_fd) {
  bool ready = false;
  try {
    install_stop_handlers();
    const Plan plan = load_plan(name);
    if (wan_index < 0 || wan_index >= static_cast<int>(plan.wans.size())) {
      throw EmuError(ErrorKind::usage,
                     fmt::format("emulation \"{}\" has no WAN link {} (it has {})", name, wan_index,
                                 plan.wans.size()));
    }
    const WanPlan& wan = plan.wans[wan_index];
    CounterFile counters = CounterFile::create(delay_line_counters_path(name, wan_index));
    counters.block().pid.store(getpid());
    const int port_a = attach_tap(plan.sites[wan.site_a].netns, wan.tap_a);
    const int port_b = attach_tap(plan.sites[wan.site_b].netns, wan.tap_b);
    DelayLine line(spec_of(plan, wan), port_a, port_b, counters.block(), log_line);
    write_file_atomically(delay_line_pid_path(name, wan_index), fmt::format("{}\n", getpid()));
    log_line(fmt::format(
        "delay line {} <-> {}: latency {}, rate {}, queue {}, loss {}, mtu {}, tcp window {}",
        plan.sites[wan.site_a].name, plan.sites[wan.site_b].name, format_duration(wan.latency_s),
        wan.bps > 0 ? format_bandwidth(wan.bps) : "unlimited", format_size(wan.queue_bytes),
        wan.loss, plan.mtu,
        wan.tcp_window_bytes > 0 ? format_size(wan.tcp_window_bytes) : "not capped"));
    if (ready_fd >= 0) {
      dprintf(ready_fd, "ready %d\n", getpid());
      close(ready_fd);
    }
    ready = true;
    raise_priority();
    line.run(stop_requested);
    for (int d = 0; d < 2; ++d)
      log_line(
          fmt::format("stopped; direction {}: {}", d, summary(counters.block().directions[d])));
    return 0;
  } catch (const std::exception& e) {
    if (!ready && ready_fd >= 0) dprintf(ready_fd, "error: %s\n", e.what());
    log_line(fmt::format("error: {}", e.what()));
    return 1;
  }
}

}  // namespace multilane::emu
