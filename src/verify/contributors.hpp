// verify/contributors.hpp — the sets of ranks whose inputs a reduced element combines.
//
// The data-flow check (data_flow.hpp) describes each byte by an origin: whose input it is and
// at which offset. A reduction combines the same input element of several ranks, so an origin
// names a *set* of contributing ranks, interned here by id: ids 0..p-1 are the single ranks
// (so a plain copy's origin is its rank, as before), larger ids are unions made by join().
//
// join() is where a reduction goes wrong or right: it refuses a rank counted twice, and, for an
// operation that is not commutative, operands out of rank order (MPI's rule: the result is
// x_0 (+) x_1 (+) ... (+) x_{p-1} with the operands in that order, grouped in any way; so both
// operands must be runs of consecutive ranks, the left one just before the right one).
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace multilane::verify {

class ContributorSets {
 public:
  explicit ContributorSets(int num_ranks);

  struct Joined {
    std::int32_t id = -1;       // the union; -1 when a rank is in both operands
    int twice = -1;             // a rank in both operands, else -1
    bool out_of_order = false;  // not (left, right) = (ranks a..b-1, ranks b..c-1)
  };
  // left (+) right, with left the left operand.
  Joined join(std::int32_t left, std::int32_t right);

  // The set of ranks 0..n-1 (every rank for n = num_ranks).
  std::int32_t first_ranks(int n);
  // "rank 3", "ranks 0-2,5".
  std::string describe(std::int32_t id) const;
  // The ranks of first_ranks(n) not in the set, and the ranks from n on in it, as describe()
  // would name them ("" for none).
  std::string missing(std::int32_t id, int n) const;
  std::string beyond(std::int32_t id, int n) const;

 private:
  using Words = std::vector<std::uint64_t>;
  std::int32_t intern(Words words);
  bool contains(std::int32_t id, int rank) const;
  // First and last rank and count of a set.
  struct Span {
    int first = -1;
    int last = -1;
    int count = 0;
  };
  Span span(std::int32_t id) const;
  static std::string list(const std::vector<int>& ranks);

  int num_ranks_;
  std::size_t words_per_set_;
  std::vector<Words> sets_;  // by id
  struct WordsHash {
    std::size_t operator()(const Words& w) const;
  };
  std::unordered_map<Words, std::int32_t, WordsHash> ids_;
  std::unordered_map<std::uint64_t, Joined> joined_;  // (left << 32 | right) -> result
};

}  // namespace multilane::verify
