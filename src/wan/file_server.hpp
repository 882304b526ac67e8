// wan/file_server.hpp — `multilane serve DIR`: receives files copied with `multilane cp`.
//
// Connections are authenticated by the job secret (auth_gate.hpp); each carries its copy's
// session number and stream count (stream_tag.hpp), so the streams of several clients copying
// at once are told apart. Once all streams of a session arrived they become one stream set and
// the copy runs on a thread of its own (file_receiver.hpp); a session whose streams do not all
// arrive within the handshake timeout is dropped. stop() ends everything in bounded time:
// sessions' sockets are shut down (their copies end as interrupted, partial files kept) and
// their threads joined. Events (copies started, finished, refused, interrupted) go to `log`.
#pragma once

#include <asio.hpp>
#include <chrono>
#include <filesystem>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "runtime/tcp/worker_threads.hpp"
#include "wan/auth_gate.hpp"
#include "wan/file_receiver.hpp"
#include "wan/stream_tag.hpp"

namespace multilane::wan {

struct FileServerOptions {
  std::filesystem::path root;
  GateOptions gate;                           // where to listen, job, secret
  std::chrono::milliseconds timeout{60'000};  // longest wait of a copy
};

class FileServer {
 public:
  using Log = std::function<void(const std::string&)>;  // any thread, one line at a time
  // Throws UsageError when `root` is not a directory, TransportError when it cannot listen.
  FileServer(const FileServerOptions& options, Log log);
  ~FileServer();
  std::uint16_t port() const;
  void run();   // serves until stop()
  void stop();  // from any thread

 private:
  struct Pending {
    std::vector<int> fds;  // by stream index, -1 until arrived
    int arrived = 0;
    std::string peer;
    std::chrono::steady_clock::time_point first;
  };

  void gather(int fd, StreamTag tag, const std::string& peer);
  void start_session(std::vector<int> fds, const std::string& peer);
  void session(std::vector<int> fds, const std::string& peer);
  void sweep();    // drops overdue pending sessions, reaps finished workers
  bool stopped();  // whether stop() has begun
  void say(const std::string& line);

  FileServerOptions options_;
  Log log_;
  std::mutex log_mutex_;
  asio::io_context loop_;
  asio::executor_work_guard<asio::io_context::executor_type> work_;
  asio::steady_timer sweeper_;
  std::unique_ptr<AuthGate> gate_;
  std::map<std::uint32_t, Pending> pending_;  // on the loop
  CopyRegistry registry_;
  std::mutex mutex_;                // stopping_
  runtime::WorkerThreads workers_;  // one per copy session; shuts their sockets at stop
  bool stopping_ = false;
};

}  // namespace multilane::wan
