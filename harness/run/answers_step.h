#pragma once
// The answers experiment (scenario "answers") of a block: greedy answers with their top-k
// probabilities to the same prompts from every block's server, and from a second start of the
// reference cache type's configuration, each written as a line of answers.jsonl.

#include <string>
#include <vector>

#include "harness/plan/plan.h"
#include "harness/run/run_folder.h"
#include "harness/run/servers.h"
#include "harness/scenario/scenario.h"

namespace kvbench::run {

class AnswersStep {
 public:
  explicit AnswersStep(const scenario::Scenario& s) : s_(s) {}

  // Asks `server` (or, with `second_start`, a fresh start of its configuration) for the answers
  // and writes them into `folder`. The prompts are built once, on the first block's server, and
  // are the same text in every block.
  void run(BlockServer& server, const plan::Block& block, bool second_start, RunFolder& folder);

 private:
  bool build_prompts(BlockServer& server, const plan::Block& block, RunFolder& folder);

  const scenario::Scenario& s_;
  std::vector<std::string> prompts_;
};

}  // namespace kvbench::run
