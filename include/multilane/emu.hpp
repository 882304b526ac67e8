// multilane/emu.hpp — an emulated grid on one Linux machine (`multilane emu`).
//
// `emu_up(platform, options)` turns a platform into network namespaces with real kernel TCP:
//   - one namespace per node (`ml-NAME-n<index>`), one per site (`ml-NAME-s<index>`);
//   - one veth pair per lane from the node into its site's bridge, shaped with tbf in both
//     directions to the lane's up/down bandwidth;
//   - lane addresses from 198.18.0.0/15 (lane l, site s, node n of the site:
//     198.18.0.0 + 4096·l + 256·s + n + 1, prefix /20, so one subnet per lane index — a rail);
//   - per-node TCP buffer limits from the platform's WAN window, so one connection across the
//     WAN is window-limited as in the papers;
//   - for every WAN link a delay-line process (`multilane emu delay-line`, a daemon) that
//     forwards frames between the two sites' bridges through TAP ports, holds each frame for
//     the one-way latency, limits each direction to the aggregate bandwidth with a bounded
//     drop-tail queue (default one bandwidth-delay product, B·2L) and drops frames at random
//     with an optional loss probability.
// Nothing is created in the host's own network namespace. State lives in /run/multilane/NAME/
// (plan.json, the platform, delay-line pid files, counters and logs).
//
// Every function that changes or reads a running emulation needs root (CAP_NET_ADMIN and
// CAP_SYS_ADMIN); `emu_unsupported_reason()` says why the emulator cannot run here. Failures
// throw EmuError (bad arguments throw UsageError) with a message naming the cause; `emu_up`
// removes whatever it created before rethrowing. `emu_down` removes everything an emulation
// owns — processes inside its namespaces, its delay lines, namespaces, state — also after a
// crashed `up` or a killed delay line, and is a no-op for a name that is not up.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>
#include <string_view>
#include <vector>

#include "multilane/errors.hpp"
#include "multilane/platform.hpp"

namespace multilane {

// An emulated grid could not be brought up, used or taken down. Its kind (errors.hpp) is usage
// when the caller named something that is not there (an emulation that is not up, one already
// up), else resource: the system refused a namespace, link, process or file.
class EmuError : public Error {
 public:
  explicit EmuError(const std::string& text) : Error(ErrorKind::resource, text) {}
  EmuError(ErrorKind kind, const std::string& text) : Error(kind, text) {}
};

struct EmuOptions {
  std::string name = "default";  // [A-Za-z0-9_]{1,24}
  int mtu = 9000;                // of every lane, bridge and WAN port (576 .. 65000)
  // Drop-tail queue of each WAN direction in bytes; nullopt: one bandwidth-delay product,
  // B·2L, and at least 32 full frames.
  std::optional<std::uint64_t> wan_queue_bytes;
  double wan_loss = 0;  // probability that a WAN frame is lost, 0 <= p < 1
  std::uint64_t seed = 1;
  // Program started as `PROGRAM emu delay-line ...` for each WAN link; empty: this process's
  // own executable (right for the `multilane` tool; tests pass the tool's path).
  std::string delay_line_program;
};

// Empty when this process can run the emulator; otherwise why not (not root, no network
// namespaces, no /dev/net/tun, no `ip`/`tc`).
std::string emu_unsupported_reason();
// Throws EmuError with that reason, after `context` ("--emu NAME: ") when one is given.
void require_emu_support(std::string_view context = {});

// Builds the emulated grid. Throws EmuError when the name is already up (or left over from a
// crashed run: the message says to run `multilane emu down`), UsageError when the platform
// does not fit the address plan (at most 16 sites, 254 nodes per site, 32 lanes).
void emu_up(const Platform& platform, const EmuOptions& options);

// Removes the emulation; returns a line per thing removed (empty when nothing was there).
std::vector<std::string> emu_down(std::string_view name);

// Names of the emulations that have state under /run/multilane/.
std::vector<std::string> emu_names();

// A readable report: sites, nodes, namespaces, addresses, shaping, TCP buffers, delay lines
// and their counters (frames, drops, queue). Throws EmuError when the name is not up.
std::string emu_status(std::string_view name);

struct EmuNode {
  int index = 0;  // node index in the platform (file order)
  std::string name;
  std::string site;
  int cores = 1;
  std::string netns;                        // network namespace holding the node
  std::vector<std::string> lane_addresses;  // IPv4 address of each lane, lane order
};

// The nodes of an emulation that is up, in platform order. Throws EmuError when not up.
std::vector<EmuNode> emu_nodes(std::string_view name);

// The command prefix that runs a program inside node `node`'s namespace, e.g.
// {"ip", "netns", "exec", "ml-default-n3"}; append the program and its arguments.
// Throws EmuError when the emulation is not up, UsageError when `node` is out of range.
std::vector<std::string> emu_exec_prefix(std::string_view name, int node);

// The IPv4 addresses of node `node`'s lanes, lane order (same errors as emu_exec_prefix).
std::vector<std::string> emu_lane_addresses(std::string_view name, int node);

// Round-trip times (seconds) of `count` UDP probes of `size` bytes (16 to 65000) sent from
// node `from`'s lane `lane` to node `to`'s lane `lane` and echoed back, in probe order; a
// probe unanswered within `timeout` is left out. One unrecorded probe goes first (ARP).
// Throws EmuError / UsageError like emu_exec_prefix.
std::vector<double> emu_ping(std::string_view name, int from, int to, int lane, int count,
                             std::size_t size,
                             std::chrono::milliseconds timeout = std::chrono::seconds(1));

// Finds a node by its name ("east-0"), its index ("3") or one of its lane addresses.
// Throws UsageError naming the nodes when nothing matches.
int emu_find_node(std::string_view name, std::string_view node);

}  // namespace multilane
