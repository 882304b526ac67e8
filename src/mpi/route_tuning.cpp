// mpi/route_tuning.cpp — reading and writing the routes of the tuning file (route_tuning.hpp).
#include "mpi/route_tuning.hpp"

#include <fmt/format.h>

#include <toml++/toml.h>
#include <sstream>

#include "mpi/call_class.hpp"
#include "multilane/algorithms.hpp"
#include "multilane/errors.hpp"

namespace multilane::mpi {

namespace {

[[noreturn]] void fail(const std::string& path, const toml::node* node, std::string_view key,
                       std::string_view why) {
  const auto line = node ? node->source().begin.line : 0;
  throw UsageError(fmt::format("{}:{}: {}: {}", path, line, key, why));
}

template <typename T>
T required(const std::string& path, const toml::table& table, std::string_view key) {
  const toml::node* node = table.get(key);
  if (!node) fail(path, &table, key, "missing");
  const std::optional<T> value = node->value<T>();
  if (!value) fail(path, node, key, "has the wrong type");
  return *value;
}

std::optional<WrappedCall> call_of_function(std::string_view name) {
  for (std::size_t i = 0; i < kWrappedCalls; ++i) {
    const auto call = static_cast<WrappedCall>(i);
    if (call_function(call, false) == name) return call;
  }
  return std::nullopt;
}

std::optional<DecisionSource> source_of(std::string_view name) {
  for (auto source :
       {DecisionSource::Measured, DecisionSource::Pruned, DecisionSource::Remeasured,
        DecisionSource::Model, DecisionSource::TuningFile, DecisionSource::Unfinished}) {
    if (name == to_string(source)) return source;
  }
  return std::nullopt;
}

// An optional count of calls (0 when absent).
std::uint64_t count_of(const std::string& path, const toml::table& t, std::string_view key) {
  const toml::node* n = t.get(key);
  if (!n) return 0;
  const auto calls = n->value<std::int64_t>();
  if (!calls || *calls < 0) fail(path, n, key, "must be a whole number, 0 or more");
  return static_cast<std::uint64_t>(*calls);
}

std::pair<std::uint64_t, ClassDecision> class_of(const std::string& path, const toml::table& t) {
  const std::string function = required<std::string>(path, t, "call");
  const std::optional<WrappedCall> call = call_of_function(function);
  if (!call) fail(path, t.get("call"), "call", fmt::format("unknown call {:?}", function));
  const std::int64_t bytes = required<std::int64_t>(path, t, "bytes");
  if (bytes < 0) fail(path, t.get("bytes"), "bytes", "must be 0 or more");
  Reduction reduction;
  if (is_reduction(carrier(*call))) {
    const std::string type = required<std::string>(path, t, "type");
    const std::string op = required<std::string>(path, t, "op");
    const auto parsed_type = parse_element_type(type);
    if (!parsed_type) fail(path, t.get("type"), "type", "must be one of " + element_type_names());
    const auto parsed_op = parse_reduce_op(op);
    if (!parsed_op) fail(path, t.get("op"), "op", "must be one of " + reduce_op_names());
    reduction = {*parsed_type, *parsed_op};
  }
  const CallClass c = classify(*call, static_cast<std::uint64_t>(bytes), reduction);
  ClassDecision decision;
  const std::string route = required<std::string>(path, t, "route");
  if (route == "mpi") {
    decision.choice = RouteChoice::Mpi;
  } else if (route == "multilane") {
    decision.choice = RouteChoice::Multilane;
  } else {
    fail(path, t.get("route"), "route",
         fmt::format("{:?}: must be \"mpi\" or \"multilane\"", route));
  }
  if (const toml::node* a = t.get("algorithm")) {
    const auto named = a->value<std::string>();
    if (!named || find_algorithm(carrier(*call), *named) == nullptr) {
      fail(path, a, "algorithm", fmt::format("must be one of {}", algorithm_names(carrier(*call))));
    }
    decision.algorithm = *named;
  }
  decision.source = DecisionSource::TuningFile;
  decision.from_tuning_file = true;
  if (const toml::node* s = t.get("source")) {
    const auto named = s->value<std::string>();
    if (!named || !source_of(*named)) {
      fail(path, s, "source",
           "must be \"measured\", \"pruned\", \"measured again\", \"model\", \"tuning file\" "
           "or \"unfinished\"");
    }
    decision.source = *source_of(*named);
  }
  decision.mpi_s = t["mpi_us"].value_or(0.0) * 1e-6;
  decision.multilane_s = t["multilane_us"].value_or(0.0) * 1e-6;
  decision.calls = count_of(path, t, "calls");
  decision.steady_calls = count_of(path, t, "steady_calls");
  return {c.key(), decision};
}

PlacementRoutes placement_of(const std::string& path, const toml::table& t) {
  PlacementRoutes p;
  p.mpi_library = required<std::string>(path, t, "mpi_library");
  p.multilane_version = required<std::string>(path, t, "multilane");
  p.placement = t["placement"].value_or(std::string());
  p.fingerprint = required<std::string>(path, t, "fingerprint");
  const std::int64_t ranks = required<std::int64_t>(path, t, "ranks");
  if (ranks < 1) fail(path, t.get("ranks"), "ranks", "must be 1 or more");
  p.ranks = static_cast<int>(ranks);
  const toml::node* classes = t.get("class");
  if (!classes) return p;
  const toml::array* list = classes->as_array();
  if (!list) fail(path, classes, "class", "must be an array of tables ([[placement.class]])");
  for (const toml::node& item : *list) {
    const toml::table* c = item.as_table();
    if (!c) fail(path, &item, "class", "must be an array of tables ([[placement.class]])");
    p.classes.insert(class_of(path, *c));
  }
  return p;
}

// A TOML basic string.
std::string quoted(std::string_view text) {
  std::ostringstream out;
  out << toml::value<std::string>(std::string(text));
  return out.str();
}

std::string format_class(std::uint64_t key, const ClassDecision& d) {
  const CallClass c = CallClass::from_key(key);
  std::string text = fmt::format("\n  [[placement.class]]\n  call = \"{}\"\n  bytes = {}\n",
                                 call_function(c.call, false), lowest_bytes(c));
  if (is_reduction(carrier(c.call))) {
    text += fmt::format("  type = \"{}\"\n  op = \"{}\"\n", to_string(c.type), to_string(c.op));
  }
  text += fmt::format("  route = \"{}\"\n", d.choice == RouteChoice::Mpi ? "mpi" : "multilane");
  if (d.choice == RouteChoice::Multilane && !d.algorithm.empty()) {
    text += fmt::format("  algorithm = \"{}\"\n", d.algorithm);  // a name: no escapes
  }
  text += fmt::format("  source = \"{}\"\n", to_string(d.source));
  if (d.mpi_s > 0) text += fmt::format("  mpi_us = {:.2f}\n", d.mpi_s * 1e6);
  if (d.multilane_s > 0) text += fmt::format("  multilane_us = {:.2f}\n", d.multilane_s * 1e6);
  if ((d.choice == RouteChoice::Multilane || d.source == DecisionSource::Unfinished) &&
      d.calls > 0) {
    text += fmt::format("  calls = {}\n", d.calls);
  }
  if (d.steady_calls > 0) {
    text += fmt::format("  steady_calls = {}\n", d.steady_calls);
  }
  return text;
}

}  // namespace

RouteTuning parse_route_tuning(std::string_view text, const std::string& path) {
  toml::table doc;
  try {
    doc = toml::parse(text, std::string_view(path));
  } catch (const toml::parse_error& e) {
    throw UsageError(fmt::format("{}:{}: {}", path, e.source().begin.line, e.description()));
  }
  RouteTuning tuning;
  if (const toml::node* placements = doc.get("placement")) {
    const toml::array* list = placements->as_array();
    if (!list) fail(path, placements, "placement", "must be an array of tables ([[placement]])");
    for (const toml::node& item : *list) {
      const toml::table* t = item.as_table();
      if (!t) fail(path, &item, "placement", "must be an array of tables ([[placement]])");
      tuning.placements.push_back(placement_of(path, *t));
    }
  }
  doc.erase("placement");
  if (!doc.empty()) {
    std::ostringstream others;
    others << doc;
    tuning.others = others.str();
  }
  return tuning;
}

std::string format_route_tuning(const RouteTuning& tuning) {
  std::string text =
      "# multilane: routes the MPI library measured (docs/mpi.md, \"The tuning file\").\n"
      "# Edit a class's route to \"mpi\" or \"multilane\"; delete a class to measure it again.\n";
  if (!tuning.others.empty()) text += "\n" + tuning.others + "\n";
  for (const PlacementRoutes& p : tuning.placements) {
    text += fmt::format(
        "\n[[placement]]\nmpi_library = {}\nmultilane = {}\nplacement = {}\nfingerprint = {}\n"
        "ranks = {}\n",
        quoted(p.mpi_library), quoted(p.multilane_version), quoted(p.placement),
        quoted(p.fingerprint), p.ranks);
    for (const auto& [key, decision] : p.classes) text += format_class(key, decision);
  }
  return text;
}

}  // namespace multilane::mpi
