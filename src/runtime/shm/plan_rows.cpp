// runtime/shm/plan_rows.cpp — see plan_rows in plan_builder.hpp.
#include <vector>

#include "runtime/shm/layout.hpp"
#include "runtime/shm/plan_builder.hpp"

namespace multilane::runtime::shm {

bool fits_in_rows(const CallShape& call, const Geometry& geometry) {
  const auto p = static_cast<std::uint64_t>(call.local_size);
  return p > 1 && call.size > 0 && p <= geometry.buffers && fits_one_stage(call, geometry);
}

void plan_rows(PlanBuilder& plan, int local_size, std::uint64_t row_bytes,
               const std::function<void(const Stage&)>& put_row,
               const std::function<void(const Stage&, int)>& get_from) {
  const auto p = static_cast<std::uint32_t>(local_size);
  const auto me = static_cast<std::uint32_t>(plan.rank());
  if (row_bytes <= kFlaggedBytes) plan.use_small_stages(row_bytes);
  std::vector<Stage> stages;
  for (std::uint32_t i = 0; i < p; ++i) stages.push_back(plan.stage(1, p - 1));
  put_row(stages[me]);
  plan.group_sync(stages[me], SyncRole::Writer);
  for (std::uint32_t k = 1; k < p; ++k) {
    const std::uint32_t from = (me + k) % p;  // rotated, so that the rows' readers spread out
    plan.group_sync(stages[from], SyncRole::Reader);
    get_from(stages[from], static_cast<int>(from));
  }
}

}  // namespace multilane::runtime::shm
