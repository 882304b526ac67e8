#include "verify/contributors.hpp"

#include <fmt/format.h>

#include <bit>

namespace multilane::verify {

ContributorSets::ContributorSets(int num_ranks)
    : num_ranks_(num_ranks), words_per_set_((static_cast<std::size_t>(num_ranks) + 63) / 64) {
  for (int r = 0; r < num_ranks; ++r) {
    Words w(words_per_set_, 0);
    w[r / 64] |= std::uint64_t{1} << (r % 64);
    intern(std::move(w));
  }
}

std::size_t ContributorSets::WordsHash::operator()(const Words& w) const {
  std::size_t h = 0;
  for (const std::uint64_t x : w) h = h * 0x9e3779b97f4a7c15ull ^ std::hash<std::uint64_t>{}(x);
  return h;
}

std::int32_t ContributorSets::intern(Words words) {
  const auto [it, added] = ids_.try_emplace(words, static_cast<std::int32_t>(sets_.size()));
  if (added) sets_.push_back(std::move(words));
  return it->second;
}

bool ContributorSets::contains(std::int32_t id, int rank) const {
  return (sets_[id][rank / 64] >> (rank % 64)) & 1;
}

ContributorSets::Span ContributorSets::span(std::int32_t id) const {
  Span s;
  const Words& w = sets_[id];
  for (std::size_t i = 0; i < w.size(); ++i) {
    if (w[i] == 0) continue;
    const int base = static_cast<int>(i * 64);
    if (s.first < 0) s.first = base + std::countr_zero(w[i]);
    s.last = base + 63 - std::countl_zero(w[i]);
    s.count += std::popcount(w[i]);
  }
  return s;
}

ContributorSets::Joined ContributorSets::join(std::int32_t left, std::int32_t right) {
  const std::uint64_t key =
      static_cast<std::uint64_t>(left) << 32 | static_cast<std::uint32_t>(right);
  if (const auto it = joined_.find(key); it != joined_.end()) return it->second;
  Joined j;
  const Words& a = sets_[left];
  const Words& b = sets_[right];
  Words u(words_per_set_);
  for (std::size_t i = 0; i < words_per_set_; ++i) {
    if (const std::uint64_t both = a[i] & b[i]; both != 0 && j.twice < 0) {
      j.twice = static_cast<int>(i * 64) + std::countr_zero(both);
    }
    u[i] = a[i] | b[i];
  }
  if (j.twice < 0) {
    const Span l = span(left);
    const Span r = span(right);
    const bool runs = l.count == l.last - l.first + 1 && r.count == r.last - r.first + 1;
    j.out_of_order = !runs || l.last + 1 != r.first;
    j.id = intern(std::move(u));
  }
  joined_.emplace(key, j);
  return j;
}

std::int32_t ContributorSets::first_ranks(int n) {
  Words w(words_per_set_, 0);
  for (int r = 0; r < n; ++r) w[r / 64] |= std::uint64_t{1} << (r % 64);
  return intern(std::move(w));
}

std::string ContributorSets::list(const std::vector<int>& ranks) {
  std::string out;
  for (std::size_t i = 0; i < ranks.size();) {
    std::size_t j = i;
    while (j + 1 < ranks.size() && ranks[j + 1] == ranks[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += j == i ? fmt::format("{}", ranks[i]) : fmt::format("{}-{}", ranks[i], ranks[j]);
    i = j + 1;
  }
  return fmt::format("{} {}", ranks.size() == 1 ? "rank" : "ranks", out);
}

std::string ContributorSets::describe(std::int32_t id) const {
  std::vector<int> ranks;
  for (int r = 0; r < num_ranks_; ++r) {
    if (contains(id, r)) ranks.push_back(r);
  }
  return list(ranks);
}

std::string ContributorSets::missing(std::int32_t id, int n) const {
  std::vector<int> ranks;
  for (int r = 0; r < n; ++r) {
    if (!contains(id, r)) ranks.push_back(r);
  }
  return ranks.empty() ? std::string() : list(ranks);
}

std::string ContributorSets::beyond(std::int32_t id, int n) const {
  std::vector<int> ranks;
  for (int r = n; r < num_ranks_; ++r) {
    if (contains(id, r)) ranks.push_back(r);
  }
  return ranks.empty() ? std::string() : list(ranks);
}

}  // namespace multilane::verify
