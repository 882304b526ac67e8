// runtime/launch/launch_signals.hpp — the launcher's signal handling while a job runs.
//
// While a JobSignals object lives, SIGINT, SIGTERM and SIGHUP sent to the launcher are caught
// (to be forwarded to the ranks, not to end the launcher and orphan them), SIGCHLD tells that
// a rank changed state, and SIGPIPE is ignored (a closed stdout must not kill the launcher with
// the ranks still running). Each caught signal makes wake_fd() readable, so the supervisor can
// sleep in poll(2) on it together with the ranks' output pipes. The previous dispositions are
// restored on destruction. Signal dispositions belong to the process: only one JobSignals may
// exist at a time (a second throws std::logic_error).
#pragma once

namespace multilane::runtime {

class JobSignals {
 public:
  JobSignals();
  JobSignals(const JobSignals&) = delete;
  JobSignals& operator=(const JobSignals&) = delete;
  ~JobSignals();

  int wake_fd() const;  // readable after any caught signal
  // Empties wake_fd; then the events since the last call:
  void drain();
  bool take_child_event();      // SIGCHLD arrived
  int take_forwarded_signal();  // SIGINT, SIGTERM or SIGHUP that arrived, or 0
};

}  // namespace multilane::runtime
