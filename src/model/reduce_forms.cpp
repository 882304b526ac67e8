// Closed forms of the reductions, in the alpha-beta-gamma model of Thakur, Rabenseifner and
// Gropp (2005): alpha = l + o per message, beta = 1/b per byte sent, gamma = 1/reduce_bps per
// byte combined. M is the vector (allreduce, reduce) or the whole send buffer p·size
// (reduce-scatter).
//
//   reduce     binomial        ceil(lg p)·(alpha + M·beta + M·gamma)
//              binary, chain, two-tree, multilane
//                              the broadcast's pipeline on the same trees, each edge's time per
//                              byte the transfer's plus children·gamma at its parent
//              rabenseifner    2·lg p·alpha + 2·(p-1)/p·M·beta + (p-1)/p·M·gamma
//              multilane-sites reduce-scatter in the site, k lanes across the WAN, gather
//   allreduce  recursive-doubling  ceil(lg p)·(alpha + M·beta + M·gamma)
//              ring            2(p-1)·alpha + 2(p-1)/p·M·beta + (p-1)/p·M·gamma
//              rabenseifner    2·lg p·alpha + 2(p-1)/p·M·beta + (p-1)/p·M·gamma
//              two-tree, multilane  reduce and broadcast overlapped, sharing every lane,
//                              plus the broadcast's pipeline filling
//              multilane-sites reduce-scatter and allgather in the sites, k lanes across,
//                              pipelined in rounds
//   reduce-scatter  ring, pairwise  (p-1)·(alpha + size·beta + size·gamma)
//              recursive-halving    lg p·alpha + (p-1)/p·M·beta + (p-1)/p·M·gamma
//              multilane-sites reduce-scatter in the site, k lanes exchange across the WAN
//   scan       chain           the broadcast's chain pipeline, each hop combining once
//              recursive-doubling  ceil(lg p)·(alpha + M·beta + M·gamma)
//              multilane-sites recursive doubling in the largest site, one WAN hop of k
//                              pieces at once and (sites-1) combines, a ring allgather in the
//                              site, one combine
//   exscan     as scan, recursive doubling one step (alpha + M·beta) more for the shift
//
// Non-powers of two cost the folding of the extras: one more step each way. The lower bound of
// any allreduce is 2(p-1)/p·M/b (allreduce_bound()).
#include <algorithm>
#include <array>
#include <cmath>

#include <fmt/format.h>

#include "model/forms.hpp"

namespace multilane::model {

namespace {

double m_of(const BuildParams& p) {
  return static_cast<double>(p.size);
}

double alpha(const Figures& f) {
  return f.lan_s + f.overhead_s;
}

double beta(const Figures& f) {
  return 1 / f.node_bps;
}

double gamma(const Figures& f) {
  return 1 / f.reduce_bps;
}

// One more step each way when p is not a power of two (the extras fold in and get it back).
int fold_steps(int p) {
  return (p & (p - 1)) == 0 ? 0 : 1;
}

double bcast_form(std::string_view name, const Figures& f, const Platform& platform,
                  const BuildParams& p) {
  for (const FormEntry& e : bcast_forms()) {
    if (e.algorithm == name) return e.form(f, platform, p);
  }
  throw UsageError(fmt::format("no broadcast form {}", name));
}

// The figures of a tree reduction: an inner rank combines `children` segments after receiving
// them, one after the other (a segment is combined once it has landed), so an edge's time per
// byte is the transfer's plus children · gamma.
Figures combining(const Figures& f, int children) {
  Figures g = f;
  const auto slowed = [&](double rate) { return 1 / (1 / rate + children / f.reduce_bps); };
  g.lane_bps = slowed(f.lane_bps);
  g.node_bps = slowed(f.node_bps);
  return g;
}

double reduce_binomial(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Reduce, "binomial");
  return ceil_log2(f.p) * (alpha(f) + m_of(p) * (beta(f) + gamma(f)));
}

double reduce_binary(const Figures& f, const Platform& platform, const BuildParams& p) {
  return bcast_form("binary", combining(f, 2), platform, p);
}

double reduce_chain(const Figures& f, const Platform& platform, const BuildParams& p) {
  return bcast_form("chain", combining(f, 1), platform, p);
}

double reduce_two_tree(const Figures& f, const Platform& platform, const BuildParams& p) {
  require_one_site(f, Collective::Reduce, "two-tree");
  return bcast_form("dbtree", combining(f, 2), platform, p);
}

double reduce_multilane(const Figures& f, const Platform& platform, const BuildParams& p) {
  require_one_site(f, Collective::Reduce, "multilane");
  return bcast_form("multilane", combining(f, 2), platform, p);
}

// Reduce-scatter then gather (or allgather): each moves (p-1)/p·M, the first also combines it.
double halving_and_back(const Figures& f, const BuildParams& p) {
  const double share = (f.p - 1.0) / f.p * m_of(p);
  const int steps = ceil_log2(f.p) - fold_steps(f.p) + 2 * fold_steps(f.p);
  return 2 * steps * alpha(f) + 2 * share * beta(f) + share * gamma(f) +
         fold_steps(f.p) * 2 * m_of(p) * beta(f);
}

double reduce_rabenseifner(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Reduce, "rabenseifner");
  return halving_and_back(f, p);
}

// The lane shape: a ring reduce-scatter in the root's site leaves k chunks of M/k (n0-1 steps),
// the k pairs cross the WAN at once `wan_steps` times with a chunk each, and `after_messages`
// steps move `after_bytes` in the site afterwards (allgather, gather to the root, or blocks to
// their owners).
double lanes(const Figures& f, const BuildParams& p, int wan_steps, double after_bytes,
             int after_messages) {
  const int smallest = *std::min_element(f.site_ranks.begin(), f.site_ranks.end());
  const int k = p.wan_pairs > 0 ? std::min(p.wan_pairs, smallest) : smallest;
  const int n0 = f.site_ranks[0];
  const double chunk = m_of(p) / k;
  const double site = (n0 - 1) * (alpha(f) + chunk * (beta(f) + gamma(f)));
  double wan = 0;
  if (f.sites() > 1) {
    wan = wan_steps * (f.wan_s + f.overhead_s + chunk / f.wan_rate(1, k) + chunk * gamma(f));
  }
  return site + wan + after_messages * alpha(f) + after_bytes * beta(f);
}

int lane_count(const Figures& f, const BuildParams& p) {
  const int smallest = *std::min_element(f.site_ranks.begin(), f.site_ranks.end());
  return p.wan_pairs > 0 ? std::min(p.wan_pairs, smallest) : smallest;
}

double reduce_multilane_sites(const Figures& f, const Platform&, const BuildParams& p) {
  const int k = lane_count(f, p);
  return lanes(f, p, f.sites() - 1, (k - 1.0) / k * m_of(p), 1);
}

double allreduce_recursive_doubling(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Allreduce, "recursive-doubling");
  const int steps = ceil_log2(f.p) - fold_steps(f.p) + 2 * fold_steps(f.p);
  return steps * (alpha(f) + m_of(p) * beta(f)) + ceil_log2(f.p) * m_of(p) * gamma(f);
}

double allreduce_ring(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Allreduce, "ring");
  const double share = (f.p - 1.0) / f.p * m_of(p);
  return 2 * (f.p - 1) * alpha(f) + 2 * share * beta(f) + share * gamma(f);
}

double allreduce_rabenseifner(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Allreduce, "rabenseifner");
  return halving_and_back(f, p);
}

// Reduce up, then broadcast down the same trees, overlapped: every rank receives its children's
// partials and its parent's result through the same lanes, so the two sweeps share them (each
// at half the rate); the broadcast adds its filling (one segment per hop).
double up_and_down(const Figures& f, const Platform& platform, const BuildParams& p,
                   std::string_view bcast_name) {
  Figures shared = combining(f, 2);
  shared.lane_bps /= 2;
  shared.node_bps /= 2;
  BuildParams one_segment = p;
  one_segment.size = std::min<std::uint64_t>(p.size, p.segment == 0 ? p.size : p.segment);
  return bcast_form(bcast_name, shared, platform, p) +
         bcast_form(bcast_name, f, platform, one_segment);
}

double allreduce_two_tree(const Figures& f, const Platform& platform, const BuildParams& p) {
  require_one_site(f, Collective::Allreduce, "two-tree");
  return up_and_down(f, platform, p, "dbtree");
}

double allreduce_multilane(const Figures& f, const Platform& platform, const BuildParams& p) {
  require_one_site(f, Collective::Allreduce, "multilane");
  return up_and_down(f, platform, p, "multilane");
}

// Pipelined in rounds of s = segment bytes: step 1 and step 3 of different rounds share the
// site's links, step 2 runs beside them on the WAN: with n rounds,
//   T = s1 + s2 + s3 + (n-1)·max(s1 + s3, s2)   (all three for a round of s bytes).
double allreduce_multilane_sites(const Figures& f, const Platform&, const BuildParams& p) {
  const int n0 = f.site_ranks[0];
  const int k = lane_count(f, p);
  const double m = m_of(p);
  // The builder's rounds: at least 1/8 of the vector each (site_lanes.cpp).
  double s = p.segment == 0 ? m : std::min<double>(m, static_cast<double>(p.segment));
  s = std::max(s, std::ceil(m / 8));
  const double rounds = s > 0 ? std::ceil(m / s) : 1;
  const double chunk = s / k;
  const double s1 = (n0 - 1) * (alpha(f) + chunk * (beta(f) + gamma(f)));
  const double s3 = (n0 - 1) * (alpha(f) + chunk * beta(f));
  double s2 = 0;
  if (f.sites() > 1) {
    s2 = ceil_log2(f.sites()) *
         (f.wan_s + f.overhead_s + chunk / f.wan_rate(1, k) + chunk * gamma(f));
  }
  return s1 + s2 + s3 + (rounds - 1) * std::max(s1 + s3, s2);
}

double reduce_scatter_steps(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::ReduceScatter, "ring or pairwise");
  const double block = m_of(p);
  return (f.p - 1) * (alpha(f) + block * (beta(f) + gamma(f)));
}

double reduce_scatter_halving(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::ReduceScatter, "recursive-halving");
  const double all = m_of(p) * f.p;
  const double share = (f.p - 1.0) / f.p * all;
  return (ceil_log2(f.p) + fold_steps(f.p)) * alpha(f) + share * (beta(f) + gamma(f)) +
         fold_steps(f.p) * all * beta(f);
}

double reduce_scatter_multilane_sites(const Figures& f, const Platform&, const BuildParams& p) {
  BuildParams whole = p;
  whole.size = p.size * static_cast<std::uint64_t>(f.p);
  const double mine = m_of(whole) / lane_count(f, p) * f.site_ranks[0] / f.p;
  return lanes(f, whole, f.sites() > 1 ? 1 : 0, mine, 1);
}

double scan_chain(const Figures& f, const Platform& platform, const BuildParams& p) {
  return bcast_form("chain", combining(f, 1), platform, p);
}

// The shift of an exscan's inputs: one step without a combine.
double shift_step(const Figures& f, const BuildParams& p, Collective c) {
  return c == Collective::Exscan ? alpha(f) + m_of(p) * beta(f) : 0;
}

double doubling_prefix(const Figures& f, const BuildParams& p, int n, Collective c) {
  const int n_scanned = c == Collective::Exscan ? n - 1 : n;
  return (n > 1 ? shift_step(f, p, c) : 0) +
         ceil_log2(n_scanned) * (alpha(f) + m_of(p) * (beta(f) + gamma(f)));
}

double scan_recursive_doubling(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Scan, "recursive-doubling");
  return doubling_prefix(f, p, f.p, Collective::Scan);
}

double exscan_recursive_doubling(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Exscan, "recursive-doubling");
  return doubling_prefix(f, p, f.p, Collective::Exscan);
}

// Priced for sites that hold consecutive ranks (one run per site).
double sites_prefix(const Figures& f, const BuildParams& p, Collective c) {
  const int n = *std::max_element(f.site_ranks.begin(), f.site_ranks.end());
  double t = doubling_prefix(f, p, n, c);
  if (f.sites() > 1) {
    const int k = lane_count(f, p);
    const double piece = m_of(p) / k;
    t += f.wan_s + f.overhead_s + piece / f.wan_rate(1, k) + (f.sites() - 1) * piece * gamma(f) +
         (k - 1) * alpha(f) + (k - 1.0) / k * m_of(p) * beta(f) + m_of(p) * gamma(f);
  }
  return t;
}

double scan_multilane_sites(const Figures& f, const Platform&, const BuildParams& p) {
  return sites_prefix(f, p, Collective::Scan);
}

double exscan_multilane_sites(const Figures& f, const Platform&, const BuildParams& p) {
  return sites_prefix(f, p, Collective::Exscan);
}

constexpr auto R = Collective::Reduce;
constexpr auto AR = Collective::Allreduce;
constexpr auto RS = Collective::ReduceScatter;
constexpr std::array kForms = {
    FormEntry{R, "binomial", reduce_binomial},
    FormEntry{R, "binary", reduce_binary},
    FormEntry{R, "chain", reduce_chain},
    FormEntry{R, "two-tree", reduce_two_tree},
    FormEntry{R, "multilane", reduce_multilane},
    FormEntry{R, "rabenseifner", reduce_rabenseifner},
    FormEntry{R, "multilane-sites", reduce_multilane_sites},
    FormEntry{AR, "recursive-doubling", allreduce_recursive_doubling},
    FormEntry{AR, "ring", allreduce_ring},
    FormEntry{AR, "rabenseifner", allreduce_rabenseifner},
    FormEntry{AR, "two-tree", allreduce_two_tree},
    FormEntry{AR, "multilane", allreduce_multilane},
    FormEntry{AR, "multilane-sites", allreduce_multilane_sites},
    FormEntry{RS, "ring", reduce_scatter_steps},
    FormEntry{RS, "pairwise", reduce_scatter_steps},
    FormEntry{RS, "recursive-halving", reduce_scatter_halving},
    FormEntry{RS, "multilane-sites", reduce_scatter_multilane_sites},
    FormEntry{Collective::Scan, "chain", scan_chain},
    FormEntry{Collective::Scan, "recursive-doubling", scan_recursive_doubling},
    FormEntry{Collective::Scan, "multilane-sites", scan_multilane_sites},
    FormEntry{Collective::Exscan, "chain", scan_chain},
    FormEntry{Collective::Exscan, "recursive-doubling", exscan_recursive_doubling},
    FormEntry{Collective::Exscan, "multilane-sites", exscan_multilane_sites},
};

}  // namespace

std::span<const FormEntry> reduce_forms() {
  return kForms;
}

}  // namespace multilane::model
