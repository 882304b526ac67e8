// Closed forms of the broadcast algorithms (broadcast paper, table 1 and section 6).
#include <algorithm>
#include <array>
#include <cmath>

#include "model/forms.hpp"

namespace multilane::model {

namespace {

double m_of(const BuildParams& p) {
  return static_cast<double>(p.size);
}

// Rate of one tree edge when a node feeds two children at once: a lane each, or half of one.
double edge_rate(const Figures& f) {
  return f.lanes >= 2 ? f.lane_bps : f.node_bps / 2;
}

double linear(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Bcast, "linear");
  return f.lan_s + f.overhead_s + (f.p - 1) * m_of(p) / f.node_bps;
}

double binomial(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Bcast, "binomial");
  return ceil_log2(f.p) * (f.lan_s + f.overhead_s + m_of(p) / f.node_bps);
}

double vandegeijn(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Bcast, "vandegeijn");
  if (f.p <= 1) return 0;
  return 2 * ceil_log2(f.p) * (f.lan_s + f.overhead_s) +
         2.0 * (f.p - 1) / f.p * m_of(p) / f.node_bps;
}

// Chain through the sites one after another: 2(p'-1)·l + L + M/b on two sites.
double chain(const Figures& f, const Platform&, const BuildParams& p) {
  const int wan_hops = f.sites() - 1;
  const double rate = wan_hops > 0 ? std::min(f.node_bps, f.wan_rate(f.lanes)) : f.node_bps;
  return pipeline(f, f.p - 1, wan_hops, rate, p.size, p.segment);
}

// The root feeds site representatives one after another over all its lanes, then every site
// runs `local(n)`; the root's own site starts once the remote sends are done.
template <typename Local>
double site_tree(const Figures& f, const BuildParams& p, bool pipelined, Local local) {
  const double m = m_of(p);
  const double wan = f.wan_rate(f.lanes);
  double worst = (f.sites() - 1) * m / wan + local(f.site_ranks[0], false);
  for (int i = 1; i < f.sites(); ++i) {
    const double before = (i - 1) * m / wan;
    const double feed = pipelined ? f.wan_s : f.wan_s + m / wan;
    worst = std::max(worst, before + feed + local(f.site_ranks[i], pipelined));
  }
  return worst + f.overhead_s;
}

// binary: log p·l + 2M/b on one site; log p·l + L + 3M/b on two (section 6).
double binary(const Figures& f, const Platform&, const BuildParams& p) {
  if (f.sites() == 1) {
    return pipeline(f, floor_log2(f.p), 0, edge_rate(f), p.size, p.segment);
  }
  const double wan = f.wan_rate(f.lanes);
  return site_tree(f, p, true, [&](int n, bool fed_over_wan) {
    const double rate = fed_over_wan ? std::min(edge_rate(f), wan) : edge_rate(f);
    return pipeline(f, floor_log2(n), 0, rate, p.size, p.segment);
  });
}

// site-binomial: L + M/b + log p'·(l + M/b) on two sites (section 6).
double site_binomial(const Figures& f, const Platform&, const BuildParams& p) {
  return site_tree(f, p, false, [&](int n, bool) {
    return ceil_log2(n) * (f.lan_s + f.overhead_s + m_of(p) / f.node_bps);
  });
}

// Hops from the root to the last rank of a multi-lane site of n non-root ranks: into the tree
// root, down a heap of ceil(n/2), across to the other tree.
int multilane_hops(int n) {
  if (n <= 0) return 0;
  if (n == 1) return 1;
  return 2 + floor_log2((n + 1) / 2);
}

// multilane: log p·l + M/b, each half at one lane's rate.
double multilane(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Bcast, "multilane");
  return pipeline(f, multilane_hops(f.p - 1), 0, edge_rate(f), (p.size + 1) / 2, p.segment);
}

// multilane-sites: trees in every site, sites chained, two streams per WAN link.
double multilane_sites(const Figures& f, const Platform&, const BuildParams& p) {
  int hops = multilane_hops(f.site_ranks[0] - 1);
  for (int i = 1; i < f.sites(); ++i) hops += multilane_hops(f.site_ranks[i]);
  double rate = edge_rate(f);
  if (f.sites() > 1) rate = std::min(rate, f.wan_rate(1, 2));
  return pipeline(f, hops, f.sites() - 1, rate, (p.size + 1) / 2, p.segment);
}

// dbtree: two in-order trees of M/2 over the p-1 non-root ranks.
double dbtree(const Figures& f, const Platform&, const BuildParams& p) {
  require_one_site(f, Collective::Bcast, "dbtree");
  return pipeline(f, 1 + floor_log2(f.p - 1), 0, edge_rate(f), (p.size + 1) / 2, p.segment);
}

constexpr auto B = Collective::Bcast;
constexpr std::array kForms = {
    FormEntry{B, "linear", linear},
    FormEntry{B, "chain", chain},
    FormEntry{B, "binary", binary},
    FormEntry{B, "binomial", binomial},
    FormEntry{B, "vandegeijn", vandegeijn},
    FormEntry{B, "multilane", multilane},
    FormEntry{B, "multilane-sites", multilane_sites},
    FormEntry{B, "dbtree", dbtree},
    FormEntry{B, "site-binomial", site_binomial},
};

}  // namespace

std::span<const FormEntry> bcast_forms() {
  return kForms;
}

}  // namespace multilane::model
