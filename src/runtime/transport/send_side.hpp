// runtime/transport/send_side.hpp — outgoing connections and the chunking of messages over them
// (internal to the engine; see engine.hpp for the behaviour).
#pragma once

#include <asio.hpp>
#include <deque>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

#include "runtime/transport/engine_context.hpp"
#include "runtime/transport/wire.hpp"

namespace multilane::runtime {

class SendSide {
 public:
  explicit SendSide(EngineContext& context);
  ~SendSide();

  void set_peer_addresses(int peer, std::vector<std::string> addresses);  // thread-safe
  void send(SendRequest request, Completion done);
  void check_timeouts(Clock::time_point now);
  void abandon_call(std::uint64_t sequence);

 private:
  struct Op;
  struct Job {
    std::shared_ptr<Op> op;
    FrameBytes header;
    std::span<const std::byte> payload;
  };
  struct Link;
  struct Stream {
    Link* link = nullptr;
    std::optional<asio::ip::tcp::socket> socket;  // set once connected
    std::deque<Job> queue;
    bool writing = false;
    bool closed = false;
  };
  struct Link {
    int peer = 0;
    int lane = 0;
    LinkClass link = LinkClass::Lan;
    std::vector<std::unique_ptr<Stream>> streams;
    bool connecting = false;
    std::string failure;  // why the link is unusable, "" while fine
  };
  struct Op {
    SendRequest request;
    Completion done;
    int chunks_left = 0;
    std::uint64_t handed_over = 0;
    Clock::time_point last_progress;
    std::vector<Stream*> streams;  // every stream carrying a chunk of it
    bool finished = false;
  };

  Link& link(int peer, int lane, LinkClass link_class);
  void connect(Link& link);
  void connected(Link& link, std::vector<int> fds, asio::ip::tcp protocol);
  void link_failed(Link& link, const std::string& reason);
  void pump(Stream& stream);
  void finish(const std::shared_ptr<Op>& op, const std::string& error);
  void close_stream(Stream& stream, const std::string& reason);
  std::string peer_endpoint(int peer, int lane);

  EngineContext& context_;
  std::mutex addresses_mutex_;
  std::vector<std::vector<std::string>> addresses_;  // per peer, per lane
  std::map<std::pair<int, int>, std::unique_ptr<Link>> links_;
  std::list<std::shared_ptr<Op>> ops_;  // unfinished sends
};

}  // namespace multilane::runtime
