// tools/probe/platform_probe.cpp — multilane-probe-openmpi / multilane-probe-mpich: the MPI
// program behind `multilane platform probe` (tools/cmd_platform.cpp starts it; run it through
// that command).
//
// Every rank finds out where it runs as the PMPI library does (mpi/discovery.hpp: nodes, lanes,
// sites from round trips), the node leaders measure the links (link_tests.hpp) over multilane's
// WAN channels, and rank 0 writes the platform as TOML, to keep and edit, and to give to
// MULTILANE_PLATFORM (ranks find their nodes in it by host name or lane address). Progress goes
// to stderr on rank 0. A failure on any rank ends the job with that rank's message.
#include <fmt/format.h>
#include <mpi.h>
#include <sodium.h>

#include <CLI/CLI.hpp>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <set>

#include "mpi/all_gather_text.hpp"
#include "mpi/discovery.hpp"
#include "mpi/host_identity.hpp"
#include "mpi/pmpi_check.hpp"
#include "multilane/errors.hpp"
#include "multilane/platform_file.hpp"
#include "multilane/units.hpp"
#include "probe/flow_runner.hpp"

namespace multilane::probe {

namespace {

struct ProbeOptions {
  std::string output;  // "" : stdout
  std::string name = "probed";
  double seconds = 2;
  int streams = 4;
};

// A secret and job id for the channels, drawn by rank 0 and broadcast.
channels::Credentials shared_credentials(int rank) {
  std::array<unsigned char, 32> key{};
  std::uint64_t job_id = 0;
  if (rank == 0) {
    if (sodium_init() < 0) {
      throw CommunicationError(ErrorKind::resource, "libsodium failed to initialise");
    }
    randombytes_buf(key.data(), key.size());
    randombytes_buf(&job_id, sizeof(job_id));
  }
  mpi::pmpi_check(PMPI_Bcast(key.data(), static_cast<int>(key.size()), MPI_BYTE, 0, MPI_COMM_WORLD),
                  "MPI_Bcast (probe secret)");
  mpi::pmpi_check(PMPI_Bcast(&job_id, 1, MPI_UINT64_T, 0, MPI_COMM_WORLD), "MPI_Bcast (job id)");
  std::array<char, 2 * 32 + 1> hex{};
  sodium_bin2hex(hex.data(), hex.size(), key.data(), key.size());
  return {.job_id = job_id, .secret = hex.data()};
}

// Nodes take their hosts' names when those tell them apart; else they keep node0, node1, ...
// and ranks find them by lane address.
void name_nodes(Platform& platform, int rank, int size) {
  const std::vector<std::string> names =
      mpi::all_gather_text(MPI_COMM_WORLD, size, mpi::this_host().name, "host names");
  std::vector<std::string> chosen(platform.nodes.size());
  for (int r = 0; r < size; ++r)
    chosen[static_cast<std::size_t>(platform.node_of(r))] = names[static_cast<std::size_t>(r)];
  const bool distinct = std::set(chosen.begin(), chosen.end()).size() == chosen.size();
  for (std::size_t n = 0; n < platform.nodes.size(); ++n) {
    platform.nodes[n].name = distinct ? chosen[n] : fmt::format("node{}", n);
  }
  (void)rank;
}

// Three significant digits: what the measurements can tell, and a file a person can read.
// (Through the decimal text, so that 20 us stays 2e-05 and is written back as "20us".)
double three_digits(double value) {
  return std::stod(fmt::format("{:.3g}", value));
}

void round_figures(Platform& platform) {
  const auto bits = [](double bytes_per_second) { return three_digits(bytes_per_second * 8) / 8; };
  for (Site& site : platform.sites) site.lan_latency_s = three_digits(site.lan_latency_s);
  for (Node& node : platform.nodes) {
    for (Lane& lane : node.lanes)
      lane.up_bps = bits(lane.up_bps), lane.down_bps = bits(lane.down_bps);
  }
  for (WanLink& link : platform.wan_links) {
    link.latency_s = three_digits(link.latency_s);
    link.aggregate_bps = bits(link.aggregate_bps);
    for (WanLink::Point& point : link.per_connection_table) point.bps = bits(point.bps);
  }
}

std::string header(const Platform& platform, const std::vector<LinkTest>& tests,
                   const std::vector<double>& rates, const ProbeOptions& options) {
  std::string out = fmt::format(
      "# Measured by `multilane platform probe` ({} s per test, {} streams per lane): sites from\n"
      "# the round trips between nodes, latencies half the round trips, and:\n",
      options.seconds, options.streams);
  for (std::size_t t = 0; t < tests.size(); ++t) {
    out += fmt::format("#   {}: {}\n", tests[t].describe(platform), format_bandwidth(rates[t]));
  }
  out += "# Ranks find their nodes by host name, else by lane address (docs/mpi.md).\n";
  return out;
}

void write(const std::string& text, const std::string& path) {
  if (path.empty() || path == "-") {
    fmt::print("{}", text);
    return;
  }
  std::ofstream out(path, std::ios::binary);
  if (out) out << text;
  if (!out)
    throw UsageError(fmt::format("--output {}: cannot write: {}", path, std::strerror(errno)));
}

int probe(const ProbeOptions& options, int rank, int size) {
  Platform platform = mpi::discovered_platform(mpi::discover(MPI_COMM_WORLD, rank, size));
  platform.name = options.name;
  platform.source = "probe";
  const std::vector<LinkTest> tests = plan_link_tests(platform, options.streams);
  const channels::Credentials credentials = shared_credentials(rank);
  std::vector<double> rates;
  for (const LinkTest& test : tests) {
    rates.push_back(run_flows(MPI_COMM_WORLD, platform, test, credentials, options.seconds));
    if (rank == 0) {
      fmt::print(stderr, "multilane platform probe: {}: {}\n", test.describe(platform),
                 format_bandwidth(rates.back()));
    }
  }
  apply_link_figures(platform, tests, rates);
  name_nodes(platform, rank, size);
  round_figures(platform);
  if (rank == 0) {
    write(header(platform, tests, rates, options) + platform_to_toml(platform), options.output);
  }
  return 0;
}

}  // namespace

}  // namespace multilane::probe

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  multilane::probe::ProbeOptions options;
  CLI::App app{"The MPI program behind `multilane platform probe`"};
  app.add_option("--output", options.output);
  app.add_option("--name", options.name);
  app.add_option("--seconds", options.seconds)->check(CLI::Range(0.1, 60.0));
  app.add_option("--streams", options.streams)->check(CLI::Range(1, 64));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    if (rank == 0) app.exit(e);
    MPI_Finalize();
    return 2;
  }
  try {
    const int status = multilane::probe::probe(options, rank, size);
    MPI_Finalize();
    return status;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "multilane platform probe: rank %d: %s\n", rank, e.what());
    MPI_Abort(MPI_COMM_WORLD, 1);
    return 1;
  }
}
