// The results layer's side of the table of workloads (workload.h): each workload's part of a call
// record, compiled into the results module.

#include <utility>
#include <variant>

#include "harness/results/record_parts.h"
#include "harness/workloads/workload.h"

namespace kvbench::results {

namespace {

template <std::size_t... I>
std::vector<RecordPartInfo> each_part(std::index_sequence<I...> /*each*/) {
  std::vector<RecordPartInfo> out;
  (out.push_back(workloads::part_of_record(std::variant_alternative_t<I, workloads::Workload>{})),
   ...);
  std::erase_if(out, [](const RecordPartInfo& p) { return p.key.empty(); });
  return out;
}

}  // namespace

const std::vector<RecordPartInfo>& record_parts() {
  static const std::vector<RecordPartInfo> kParts =
      each_part(std::make_index_sequence<std::variant_size_v<workloads::Workload>>());
  return kParts;
}

}  // namespace kvbench::results
