#include "runtime/shm/step.hpp"

namespace multilane::runtime::shm {

std::string_view to_string(Primitive primitive) {
  switch (primitive) {
    case Primitive::SenderPut:
      return "Sender_put";
    case Primitive::GroupSegPut:
      return "Group_seg_put";
    case Primitive::PairSync:
      return "Pair_sync";
    case Primitive::GroupSync:
      return "Group_sync";
    case Primitive::ReceiverGet:
      return "Receiver_get";
    case Primitive::GroupGet:
      return "Group_get";
    case Primitive::GroupSegGet:
      return "Group_seg_get";
    case Primitive::LocalCopy:
      return "local_copy";
    case Primitive::Expose:
      return "expose";
    case Primitive::DirectGet:
      return "direct_get";
    case Primitive::DirectPut:
      return "direct_put";
  }
  return "?";
}

}  // namespace multilane::runtime::shm
