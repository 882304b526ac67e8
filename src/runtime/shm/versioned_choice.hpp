// runtime/shm/versioned_choice.hpp — a learned choice that every rank of a group takes the same
// for the same call, without talking.
//
// The shm layer learns two things as its calls run: the copy path of a class of calls
// (copy_chooser.hpp) and the root's share of a single-copy rooted call (root_share.hpp). Each
// is one 64-bit word in shared memory per class of calls, written by one rank, its *decider*,
// only, and read by every rank at the start of every call of the class. The word holds the
// value before and after the last change and the serial of the first call that takes the new
// one: call S takes at(S).
//
// Why the ranks agree. The decider changes the word only at the start of a call N of the
// class, before it writes anything of call N, and the change takes effect at call N + 1
// (from_serial = N + 1). A rank that reads the word for call S takes the old value when S is
// before the change, the new one from it on. Two conditions make every rank read the value the
// decider meant:
// 1. Every rank sees the change before it enters call N + 1: in call N it waits for something
//    the decider wrote after the change (which releases the word).
// 2. A rank that is behind may read the word of a later change: it then finds its own call's
//    value as the word's old value, as long as the decider never changes the word while a rank
//    may still read it for a call before the previous change: the decider's every change
//    follows a call in which every rank finished the calls before the previous change.
// Each user says how it meets both (copy_chooser.hpp, root_share.hpp). The call's fingerprint
// (call_record.hpp) includes what was chosen, so a disagreement would still be caught and
// named rather than corrupt data.
#pragma once

#include <cstdint>

namespace multilane::runtime::shm {

template <class T>
struct VersionedChoice {
  bool valid = false;  // false: nothing learned yet (the caller's default decides)
  T old_value{};
  T new_value{};
  std::uint64_t from_serial = 0;  // the first call that takes new_value
  T at(std::uint64_t serial) const { return serial >= from_serial ? new_value : old_value; }
  friend bool operator==(const VersionedChoice&, const VersionedChoice&) = default;
};

}  // namespace multilane::runtime::shm
