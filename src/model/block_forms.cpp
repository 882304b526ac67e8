// Closed forms of the block collectives: scatter and gather (scatter/gather paper: the
// single-lane MagPIe form and T(P)), allgather (one site; the site lanes on several) and
// alltoall (one site).
#include <algorithm>
#include <array>

#include "model/forms.hpp"
#include "multilane/wan_pairs.hpp"

namespace multilane::model {

namespace {

double m_of(const BuildParams& p) {
  return static_cast<double>(p.size);
}

// Root sends every block at once: its uplink carries (p-1)·M; remote blocks also share the WAN.
double linear(const Figures& f, const Platform&, const BuildParams& p) {
  const double m = m_of(p);
  double t = f.lan_s + f.overhead_s + (f.p - 1) * m / f.node_bps;
  if (f.sites() > 1) {
    const int remote = f.p - f.site_ranks[0];
    const double wan = f.wan_rate(f.lanes, remote) * remote;
    t = std::max(t, f.wan_s + f.overhead_s + remote * m / std::min(wan, f.node_bps));
  }
  return t;
}

double binomial(const Figures& f, const Platform&, const BuildParams& p) {
  if (f.sites() > 1) {
    throw UsageError(
        "scatter/gather binomial has no closed form on several sites (its subtrees straddle the "
        "WAN); simulate it instead");
  }
  return ceil_log2(f.p) * (f.lan_s + f.overhead_s) + (f.p - 1) * m_of(p) / f.node_bps;
}

// MagPIe: L + n1·M/b_WAN(1) + (max(n0, n1) - 1)·(l + M/b_LAN). The one WAN message travels on
// one lane, one TCP connection, as in the paper: b_WAN(1).
double single_lane(const Figures& f, const Platform& platform, const BuildParams& p) {
  const double m = m_of(p);
  const int n0 = f.site_ranks[0];
  if (f.sites() == 1) return (n0 - 1) * (f.lan_s + f.overhead_s + m / f.node_bps);
  if (f.sites() > 2) throw UsageError("single-lane scatter/gather: closed form for two sites only");
  const WanPairsInputs in = wan_pairs_inputs(platform, p.root, remote_site(platform, p.root));
  const int n1 = f.site_ranks[1];
  return in.wan_latency_s + n1 * m / wan_pairs_connection_bps(in, 1) +
         (std::max(n0, n1) - 1) * (f.lan_s + f.overhead_s + m / in.lan_bps);
}

// T(P) = L + X(P)·M/b_WAN(P) + Y(P)·M/b_LAN + α, P given or P_opt.
double multilane(const Figures& f, const Platform& platform, const BuildParams& p) {
  if (f.sites() == 1) return single_lane(f, platform, p);
  if (f.sites() > 2) throw UsageError("multilane scatter/gather: closed form for two sites only");
  const WanPairsInputs in = wan_pairs_inputs(platform, p.root, remote_site(platform, p.root));
  const int pairs =
      p.wan_pairs > 0 ? std::min(p.wan_pairs, max_wan_pairs(in)) : optimal_wan_pairs(in, p.size);
  return wan_pairs_time(in, pairs, p.size) + f.overhead_s;
}

double ring(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Allgather, "ring");
  return (f.p - 1) * (f.lan_s + f.overhead_s + m_of(p) / f.node_bps);
}

double recursive_doubling(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Allgather, "recursive-doubling");
  return ceil_log2(f.p) * (f.lan_s + f.overhead_s) + (f.p - 1) * m_of(p) / f.node_bps;
}

// The site lanes (algorithms/allgather_sites.cpp): a ring in the largest site, then each of k
// leaders sends its 1/k of the site's blocks to its counterpart in every other site (one
// connection each, k at once) and hands what it got, 1/k of every other site's blocks, to the
// rest of its site.
double allgather_sites(const Figures& f, const Platform&, const BuildParams& p) {
  const int largest = *std::max_element(f.site_ranks.begin(), f.site_ranks.end());
  const int smallest = *std::min_element(f.site_ranks.begin(), f.site_ranks.end());
  const int k = p.wan_pairs > 0 ? std::min(p.wan_pairs, smallest) : smallest;
  const double m = m_of(p);
  double t = (largest - 1) * (f.lan_s + f.overhead_s + m / f.node_bps);
  if (f.sites() == 1) return t;
  const double remote = (f.p - smallest) * m / k;  // what one leader gets, at most
  t += f.wan_s + f.overhead_s + std::max(largest * m / k, remote) / f.wan_rate(1, k);
  return t + (largest - 1) * (f.lan_s + f.overhead_s + remote / f.node_bps);
}

double pairwise(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Alltoall, "pairwise");
  return (f.p - 1) * (f.lan_s + f.overhead_s + m_of(p) / f.node_bps);
}

double all_linear(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Alltoall, "linear");
  return f.lan_s + f.overhead_s + (f.p - 1) * m_of(p) / f.node_bps;
}

constexpr auto S = Collective::Scatter;
constexpr auto G = Collective::Gather;
constexpr std::array kForms = {
    FormEntry{S, "linear", linear},
    FormEntry{S, "binomial", binomial},
    FormEntry{S, "single-lane", single_lane},
    FormEntry{S, "multilane", multilane},
    FormEntry{G, "linear", linear},
    FormEntry{G, "binomial", binomial},
    FormEntry{G, "single-lane", single_lane},
    FormEntry{G, "multilane", multilane},
    FormEntry{Collective::Allgather, "ring", ring},
    FormEntry{Collective::Allgather, "recursive-doubling", recursive_doubling},
    FormEntry{Collective::Allgather, "multilane-sites", allgather_sites},
    FormEntry{Collective::Alltoall, "pairwise", pairwise},
    FormEntry{Collective::Alltoall, "linear", all_linear},
};

}  // namespace

std::span<const FormEntry> block_forms() {
  return kForms;
}

}  // namespace multilane::model
