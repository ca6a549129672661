#pragma once
// The prompt sweep as a CallSource: every call a prompt of its exact token count with its unique
// first line, a prefix-reuse pair's cold read and edited resend, and the reuse each should see
// predicted from what its server slot read last.

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "harness/run/call_records.h"
#include "harness/run/call_source.h"

namespace kvbench::run {

class SweepSource final : public CallSource {
 public:
  // `wall_clock` dates the timestamp lines of pair prompts; `run_id` goes into every record and
  // first line.
  SweepSource(const scenario::Scenario& s, const Clock& wall_clock, std::string run_id);

  void reset(const plan::Block& block, backend::Backend& be,
             const std::vector<int>& slot0) override;
  CallRecord unsent(const plan::PlannedCall& call, const plan::Block& block) const override;
  PreparedCall prepare(const plan::PlannedCall& call) override;
  void expect(PreparedCall& p, std::optional<int> slot) override;
  void finish(PreparedCall& p, backend::CallResult res) override;

  // The records' plan fields, for a workload that sends other calls beside the sweep's.
  const CallRecords& records() const { return records_; }
  const plan::Block& block() const { return *block_; }
  backend::Backend& backend() const { return *be_; }

 private:
  CallRecords records_;
  const plan::Block* block_ = nullptr;
  backend::Backend* be_ = nullptr;
  std::map<int, std::vector<int>> held_;  // what each server slot read last
};

}  // namespace kvbench::run
