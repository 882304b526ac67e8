// Reading platform TOML files (load_platform_file, parse_platform; format in
// docs/platform-format.md).
//
// Node figures inherit downwards: [defaults] -> [[site]] -> [[site.node]]; each level may set
// any of lanes, lane_bandwidth / lane_up / lane_down and cores, and the nearest one wins.
// Every check happens here, while the TOML nodes (and so their line numbers) are at hand;
// the Platform that comes out is complete and consistent.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <cstring>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>

#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"
#include "platform/toml_table.hpp"

namespace multilane {

namespace {

using platform_toml::TomlTable;

constexpr int kMaxLanes = 64;
constexpr int kMaxNodesPerSite = 1 << 20;
constexpr int kMaxCores = 1 << 16;

// One entry of an explicit `lanes = [{up = ..., down = ...}, ...]` array.
struct LaneDraft {
  std::optional<double> up;
  std::optional<double> down;
  std::string address;
  const toml::node* where = nullptr;
  std::string key;  // "lanes[1]", for messages
};

// What one level (defaults, site, node) says about the nodes below it; unset fields inherit.
struct NodeShape {
  std::optional<int> lane_count;
  std::optional<std::vector<LaneDraft>> lane_list;
  std::optional<double> lane_up;
  std::optional<double> lane_down;
  std::optional<int> cores;

  NodeShape overridden_by(const NodeShape& child) const {
    NodeShape out = *this;
    if (child.lane_count || child.lane_list) {
      out.lane_count = child.lane_count;
      out.lane_list = child.lane_list;
    }
    if (child.lane_up) out.lane_up = child.lane_up;
    if (child.lane_down) out.lane_down = child.lane_down;
    if (child.cores) out.cores = child.cores;
    return out;
  }
};

// Site-wide figures that [defaults] may also give.
struct SiteFigures {
  std::optional<double> lan_latency;
  std::optional<double> shm_copy;
  std::optional<double> shm_sync;
  std::optional<std::uint64_t> single_copy_from;
  std::optional<double> single_copy;
  std::optional<double> single_copy_latency;
  std::optional<double> reduce;

  SiteFigures overridden_by(const SiteFigures& child) const {
    const auto pick = [](const auto& nearer, const auto& farther) {
      return nearer ? nearer : farther;
    };
    return {pick(child.lan_latency, lan_latency),
            pick(child.shm_copy, shm_copy),
            pick(child.shm_sync, shm_sync),
            pick(child.single_copy_from, single_copy_from),
            pick(child.single_copy, single_copy),
            pick(child.single_copy_latency, single_copy_latency),
            pick(child.reduce, reduce)};
  }
};

// A size, or "never" (0).
std::optional<std::uint64_t> size_or_never(const TomlTable& at, std::string_view key) {
  const auto* value = at.get(key);
  if (value == nullptr) return std::nullopt;
  const auto text = value->value<std::string_view>();
  if (text == "never") return 0;
  bool zero = false;
  try {
    zero = text && parse_size(*text) == 0;
  } catch (const UsageError&) {
    // Not a size: at.size() below reports it.
  }
  if (zero)
    at.fail(key, value, fmt::format("must be a positive size, or \"never\"; got \"{}\"", *text));
  return at.size(key);
}

LaneDraft read_lane_entry(const TomlTable& at, std::string key, const toml::node& entry) {
  const auto* table = entry.as_table();
  if (table == nullptr) {
    at.fail(key, &entry, "expected a table like {up = \"1Gbit/s\", down = \"1Gbit/s\"}");
  }
  const TomlTable lane(*table, at.path_of(key), at.file());
  lane.allow_only({"up", "down", "bandwidth", "address"});
  LaneDraft draft;
  draft.where = &entry;
  draft.key = std::move(key);
  if (const auto both = lane.bandwidth("bandwidth")) {
    if (lane.has("up") || lane.has("down")) {
      lane.fail("bandwidth", lane.get("bandwidth"), "give bandwidth or up/down, not both");
    }
    draft.up = draft.down = both;
  }
  if (const auto up = lane.bandwidth("up")) draft.up = up;
  if (const auto down = lane.bandwidth("down")) draft.down = down;
  draft.address = lane.string("address").value_or("");
  return draft;
}

NodeShape read_shape(const TomlTable& at) {
  NodeShape shape;
  if (const auto* lanes = at.get("lanes")) {
    if (const auto* list = lanes->as_array()) {
      if (list->empty()) at.fail("lanes", lanes, "must list at least 1 lane");
      if (list->size() > kMaxLanes) at.fail("lanes", lanes, "at most 64 lanes per node");
      shape.lane_list.emplace();
      for (std::size_t i = 0; i < list->size(); ++i) {
        shape.lane_list->push_back(read_lane_entry(at, fmt::format("lanes[{}]", i), (*list)[i]));
      }
    } else {
      shape.lane_count = platform_toml::checked_integer(at, "lanes", *lanes, 1, kMaxLanes);
    }
  }
  if (const auto both = at.bandwidth("lane_bandwidth")) {
    if (at.has("lane_up") || at.has("lane_down")) {
      at.fail("lane_bandwidth", at.get("lane_bandwidth"),
              "give lane_bandwidth or lane_up/lane_down, not both");
    }
    shape.lane_up = shape.lane_down = both;
  }
  if (const auto up = at.bandwidth("lane_up")) shape.lane_up = up;
  if (const auto down = at.bandwidth("lane_down")) shape.lane_down = down;
  shape.cores = at.integer("cores", 1, kMaxCores);
  return shape;
}

SiteFigures read_site_figures(const TomlTable& at) {
  SiteFigures figures;
  figures.lan_latency = at.duration("lan_latency");
  figures.shm_copy = at.bandwidth("shm_copy_bandwidth");
  figures.shm_sync = at.duration("shm_sync_latency");
  figures.single_copy_from = size_or_never(at, "shm_single_copy_from");
  figures.single_copy = at.bandwidth("shm_single_copy_bandwidth");
  figures.single_copy_latency = at.duration("shm_single_copy_latency");
  figures.reduce = at.bandwidth("reduce_bandwidth");
  return figures;
}

constexpr std::string_view kLaneHint =
    "give lane_bandwidth (or lane_up and lane_down) on the node, its site or in [defaults]";

// The lanes of a node. `at` is the table missing figures are reported against: the node's
// own table, or its site's when the site generated it from a count.
std::vector<Lane> build_lanes(const NodeShape& shape, const TomlTable& at) {
  std::vector<Lane> lanes;
  if (shape.lane_list) {
    for (const auto& draft : *shape.lane_list) {
      const auto up = draft.up ? draft.up : shape.lane_up;
      const auto down = draft.down ? draft.down : shape.lane_down;
      if (!up || !down) {
        at.fail(draft.key, draft.where,
                fmt::format("{} bandwidth missing; give it in the lane or {}", up ? "down" : "up",
                            kLaneHint));
      }
      lanes.push_back({*up, *down, draft.address});
    }
    return lanes;
  }
  if (!shape.lane_up || !shape.lane_down) {
    at.fail_missing(shape.lane_up || shape.lane_down ? (shape.lane_up ? "lane_down" : "lane_up")
                                                     : "lane_bandwidth",
                    kLaneHint);
  }
  lanes.assign(shape.lane_count.value_or(1), Lane{*shape.lane_up, *shape.lane_down, ""});
  return lanes;
}

class PlatformReader {
 public:
  PlatformReader(const toml::table& root, const std::string& file) : root_(root, "", file) {}

  Platform read() {
    root_.allow_only({"name", "defaults", "site", "wan", "placement"});
    platform_.name = root_.required_string("name");
    if (const auto defaults = root_.table("defaults")) {
      defaults->allow_only({"lanes", "lane_bandwidth", "lane_up", "lane_down", "cores",
                            "lan_latency", "shm_copy_bandwidth", "shm_sync_latency",
                            "shm_single_copy_from", "shm_single_copy_bandwidth",
                            "shm_single_copy_latency", "reduce_bandwidth"});
      default_shape_ = read_shape(*defaults);
      default_figures_ = read_site_figures(*defaults);
    }
    const auto sites = root_.tables("site");
    if (sites.empty()) root_.fail_missing("site", "a platform needs at least one [[site]] table");
    for (const auto& site : sites) read_site(site);
    for (const auto& wan : root_.tables("wan")) read_wan(wan);
    read_placement();
    return std::move(platform_);
  }

 private:
  void read_site(const TomlTable& at) {
    at.allow_only({"name", "nodes", "node", "lanes", "lane_bandwidth", "lane_up", "lane_down",
                   "cores", "lan_latency", "shm_copy_bandwidth", "shm_sync_latency",
                   "shm_single_copy_from", "shm_single_copy_bandwidth", "shm_single_copy_latency",
                   "reduce_bandwidth"});
    Site site;
    site.name = at.required_string("name");
    claim_name(site_lines_, site.name, at, "name", "site");
    const SiteFigures figures = default_figures_.overridden_by(read_site_figures(at));
    if (!figures.lan_latency) at.fail_missing("lan_latency", "give it here or in [defaults]");
    site.lan_latency_s = *figures.lan_latency;
    site.shm.copy_bps = figures.shm_copy.value_or(site.shm.copy_bps);
    site.shm.sync_latency_s = figures.shm_sync.value_or(site.shm.sync_latency_s);
    site.shm.single_copy_from = figures.single_copy_from.value_or(site.shm.single_copy_from);
    // Unknown, a kernel copy is taken to be as fast as the site's own copies.
    site.shm.single_copy_bps = figures.single_copy.value_or(site.shm.copy_bps);
    site.shm.single_copy_latency_s =
        figures.single_copy_latency.value_or(site.shm.single_copy_latency_s);
    site.shm.reduce_bps = figures.reduce.value_or(site.shm.reduce_bps);
    const int site_index = platform_.num_sites();
    platform_.sites.push_back(std::move(site));

    const NodeShape shape = default_shape_.overridden_by(read_shape(at));
    const auto count = at.integer("nodes", 1, kMaxNodesPerSite);
    const auto tables = at.tables("node");
    if (count && !tables.empty()) {
      at.fail("nodes", at.get("nodes"), "give nodes = COUNT or [[site.node]] tables, not both");
    }
    if (!count && tables.empty()) {
      at.fail_missing("nodes", "give nodes = COUNT or [[site.node]] tables");
    }
    for (int i = 0; i < count.value_or(0); ++i) {
      add_node(site_index, default_node_name(site_index, i), shape.cores.value_or(1),
               build_lanes(shape, at), at, "nodes");
    }
    for (std::size_t i = 0; i < tables.size(); ++i) {
      read_node(tables[i], site_index, static_cast<int>(i), shape);
    }
  }

  std::string default_node_name(int site, int index) const {
    return fmt::format("{}-{}", platform_.sites[site].name, index);
  }

  void read_node(const TomlTable& at, int site, int index, const NodeShape& site_shape) {
    at.allow_only({"name", "lanes", "lane_bandwidth", "lane_up", "lane_down", "cores"});
    const NodeShape shape = site_shape.overridden_by(read_shape(at));
    const std::string name = at.string("name").value_or(default_node_name(site, index));
    add_node(site, name, shape.cores.value_or(1), build_lanes(shape, at), at,
             at.has("name") ? "name" : "");
  }

  void add_node(int site, const std::string& name, int cores, std::vector<Lane> lanes,
                const TomlTable& at, std::string_view key) {
    claim_name(node_lines_, name, at, key, "node");
    Node node;
    node.name = name;
    node.site = site;
    node.cores = cores;
    node.lanes = std::move(lanes);
    platform_.sites[site].nodes.push_back(static_cast<int>(platform_.nodes.size()));
    node_index_[name] = static_cast<int>(platform_.nodes.size());
    platform_.nodes.push_back(std::move(node));
  }

  // Site and node names must be unique; the message points back at the first use.
  static void claim_name(std::map<std::string, int>& seen, const std::string& name,
                         const TomlTable& at, std::string_view key, std::string_view what) {
    const auto* where = key.empty() ? nullptr : at.get(key);
    const int line = where != nullptr ? platform_toml::line_of(*where) : at.line();
    const auto [it, fresh] = seen.emplace(name, line);
    if (!fresh) {
      at.fail(key.empty() ? "name" : key, where,
              fmt::format("duplicate {} name \"{}\" (first at line {})", what, name, it->second));
    }
  }

  int site_named(const TomlTable& at, std::string_view key, const toml::node& value) const {
    const std::string name = platform_toml::checked_string(at, key, value);
    for (int s = 0; s < platform_.num_sites(); ++s) {
      if (platform_.sites[s].name == name) return s;
    }
    std::string known;
    for (const auto& site : platform_.sites) known += (known.empty() ? "" : ", ") + site.name;
    at.fail(key, &value, fmt::format("unknown site \"{}\"; sites are {}", name, known));
  }

  void read_wan(const TomlTable& at) {
    at.allow_only(
        {"between", "latency", "bandwidth", "connection_bandwidth", "connection", "tcp_window"});
    WanLink link;
    const auto* between = at.get("between");
    if (between == nullptr) at.fail_missing("between", "give between = [\"SITE\", \"SITE\"]");
    const auto* pair = between->as_array();
    if (pair == nullptr || pair->size() != 2) {
      at.fail("between", between, "expected two site names, like [\"tokyo\", \"osaka\"]");
    }
    link.site_a = site_named(at, "between[0]", (*pair)[0]);
    link.site_b = site_named(at, "between[1]", (*pair)[1]);
    if (link.site_a == link.site_b) {
      at.fail("between", between,
              fmt::format("a link from site \"{}\" to itself", platform_.sites[link.site_a].name));
    }
    if (platform_.wan_between(link.site_a, link.site_b) != nullptr) {
      at.fail("between", between,
              fmt::format("a second link between \"{}\" and \"{}\"",
                          platform_.sites[link.site_a].name, platform_.sites[link.site_b].name));
    }
    const auto latency = at.duration("latency");
    if (!latency) at.fail_missing("latency", "give the one-way latency, like \"10ms\"");
    link.latency_s = *latency;
    link.aggregate_bps = at.bandwidth("bandwidth").value_or(0);
    link.per_connection_table = read_connection_table(at);
    link.tcp_window_bytes = static_cast<double>(at.size("tcp_window").value_or(0));
    platform_.wan_links.push_back(std::move(link));
  }

  static std::vector<WanLink::Point> read_connection_table(const TomlTable& at) {
    std::vector<WanLink::Point> table;
    if (const auto single = at.bandwidth("connection_bandwidth")) {
      if (at.has("connection")) {
        at.fail("connection_bandwidth", at.get("connection_bandwidth"),
                "give connection_bandwidth or [[wan.connection]] tables, not both");
      }
      table.push_back({1, *single});
    }
    std::map<int, int> lines;  // connections -> line, to reject a point given twice
    for (const auto& point_at : at.tables("connection")) {
      point_at.allow_only({"connections", "bandwidth"});
      const auto connections = point_at.integer("connections", 1, INT_MAX);
      if (!connections) point_at.fail_missing("connections", "");
      const auto bandwidth = point_at.bandwidth("bandwidth");
      if (!bandwidth) point_at.fail_missing("bandwidth", "");
      const auto [it, fresh] = lines.emplace(*connections, point_at.line());
      if (!fresh) {
        point_at.fail("connections", point_at.get("connections"),
                      fmt::format("connections = {} given twice (first at line {})", *connections,
                                  it->second));
      }
      table.push_back({*connections, *bandwidth});
    }
    // WanLink::connection_cap_bps interpolates over a table sorted by connections.
    std::sort(table.begin(), table.end(),
              [](const auto& a, const auto& b) { return a.connections < b.connections; });
    return table;
  }

  void read_placement() {
    const auto at = root_.table("placement");
    if (!at) {
      platform_.place_block(platform_.total_cores());
      return;
    }
    at->allow_only({"ranks", "mode", "nodes"});
    const auto ranks = at->integer("ranks", 1, INT_MAX);
    if (const auto* nodes = at->get("nodes")) {
      if (at->has("mode")) {
        at->fail("mode", at->get("mode"), "give mode or an explicit nodes list, not both");
      }
      place_explicitly(*at, *nodes, ranks);
      return;
    }
    if (const auto mode = at->string("mode"); mode && *mode != "block") {
      at->fail("mode", at->get("mode"),
               fmt::format("unknown placement mode \"{}\"; allowed: block", *mode));
    }
    const int count = ranks.value_or(platform_.total_cores());
    if (count > platform_.total_cores()) {
      at->fail("ranks", at->get("ranks"),
               fmt::format("{} ranks but the nodes have only {} cores in all", count,
                           platform_.total_cores()));
    }
    platform_.place_block(count);
  }

  // One node name per rank; a rank takes the next free core of its node.
  void place_explicitly(const TomlTable& at, const toml::node& nodes, std::optional<int> ranks) {
    const auto* list = nodes.as_array();
    if (list == nullptr || list->empty()) {
      at.fail("nodes", &nodes, "expected a non-empty array of node names, one per rank");
    }
    if (ranks && *ranks != static_cast<int>(list->size())) {
      at.fail("ranks", at.get("ranks"),
              fmt::format("ranks = {} but nodes lists {} ranks", *ranks, list->size()));
    }
    std::vector<int> used(platform_.nodes.size(), 0);
    for (std::size_t r = 0; r < list->size(); ++r) {
      const std::string key = fmt::format("nodes[{}]", r);
      const std::string name = platform_toml::checked_string(at, key, (*list)[r]);
      const auto it = node_index_.find(name);
      if (it == node_index_.end()) {
        at.fail(key, &(*list)[r], fmt::format("unknown node \"{}\"", name));
      }
      const int node = it->second;
      if (used[node] == platform_.nodes[node].cores) {
        at.fail(key, &(*list)[r],
                fmt::format("more ranks on node \"{}\" than its {} cores", name,
                            platform_.nodes[node].cores));
      }
      platform_.ranks.push_back({node, used[node]++});
    }
  }

  TomlTable root_;
  Platform platform_;
  NodeShape default_shape_;
  SiteFigures default_figures_;
  std::map<std::string, int> site_lines_;
  std::map<std::string, int> node_lines_;
  std::map<std::string, int> node_index_;
};

}  // namespace

Platform parse_platform(std::string_view toml_text, const std::string& source_name) {
  toml::table root;
  try {
    root = toml::parse(toml_text, std::string_view(source_name));
  } catch (const toml::parse_error& e) {
    platform_toml::fail_at(source_name, static_cast<int>(e.source().begin.line), "syntax",
                           e.description());
  }
  Platform platform = PlatformReader(root, source_name).read();
  platform.source = source_name;
  return platform;
}

Platform load_platform_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) throw PlatformError(fmt::format("{}: cannot open: {}", path, std::strerror(errno)));
  std::ostringstream text;
  text << in.rdbuf();
  return parse_platform(text.str(), path);
}

}  // namespace multilane
