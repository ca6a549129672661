// A prompt sweep's calls carry no part of their own: their record is the record's core.

#include "harness/results/record_parts.h"
#include "harness/workloads/sweep/spec.h"

namespace kvbench::workloads {

results::RecordPartInfo part_of_record(const Sweep& /*w*/) {
  return {};
}

}  // namespace kvbench::workloads
