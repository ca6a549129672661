#pragma once
// The conversation part of a run's report (scenario "conversation"): per turn, the TTFT with the
// history reused and with reuse defeated, the tokens read against the tokens reused and the
// reuse predicted; the proof that each turn reused what its slot held; the turns that lost their
// history; and, per number of conversations sharing the slots, the reuse rate, answered in words
// beside the KV arithmetic. Pure: records in, numbers and text out.

#include <optional>
#include <ostream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/core/record.h"
#include "harness/results/manifest.h"
#include "harness/workloads/conversation/spec.h"

namespace kvbench::report {

// The turns of one set level, reuse mode and turn number (one server configuration).
struct TurnRow {
  std::string config;  // "ctx=4096 kv=f16" (and the variant)
  int conversations = 1;
  bool reuse = true;
  int turn = 1;
  int n = 0;       // turns that succeeded
  int failed = 0;  // turns that failed (or were never sent)
  std::optional<double> ttft_ms;
  std::optional<double> prompt_tokens;  // counted
  std::optional<double> reused;         // the server's cache_n
  std::optional<double> history;        // history_tokens
  std::optional<double> decode_tps;     // client decode rate
  int proved = 0;                       // reused exactly what its slot held (expected_cache_n)
  int predicted = 0;                    // with a prediction and a reported reuse
  int lost = 0;                         // history_lost
};

// Reuse on, one set level, turns after the first.
struct LevelRow {
  std::string config;
  int conversations = 1;
  int turns = 0;                          // with a history prediction and a reported reuse
  int kept = 0;                           // reused at least their history
  double reuse_rate = 0;                  // reused / history tokens, summed
  std::optional<double> reread;           // median tokens of history read again on a lost turn
  std::optional<double> history_ttft_ms;  // median TTFT of these turns
  // Conversations at once: the most turns in flight at a send, and the median wait from when a
  // turn was due to its send (its preparing and any wait for its slot), over every turn.
  int max_in_flight = 0;
  std::optional<double> wait_ms;
};

// Reuse on against off at the same turn (the smallest level that has both).
struct SavingRow {
  std::string config;
  int conversations = 1;
  int turn = 1;
  double on_ms = 0;
  double off_ms = 0;
};

struct ConversationReport {
  bool present = false;
  int turns = 0;
  int slots = 1;
  bool concurrent = false;  // a set's conversations in flight at once
  double think_time_s = 0;
  std::vector<TurnRow> rows;
  std::vector<LevelRow> levels;
  std::vector<SavingRow> saving;
  int proved = 0;
  int predicted = 0;
  int unpredicted = 0;  // turns with a reported reuse but no prediction (no token ids)
  int lost = 0;
  int restored = 0;
  int unexpected = 0;
  std::vector<std::string> lost_where;  // "conversation 9 (4 in its set): turns 2-5"
  // The answer in words, per configuration: the largest level whose turns all kept their history.
  struct Answer {
    std::string config;
    std::optional<int> kept_up_to;
    std::optional<int> first_lost;       // the smallest level that lost
    std::optional<double> reread;        // at first_lost: median tokens read again per lost turn
    std::optional<double> final_tokens;  // median prompt tokens at the last turn
    double kv_bytes_per_token = 0;       // from the server's log; 0 unknown
    int slot_cells = 0;                  // num_ctx per slot
    std::optional<int> cache_ram_mib;    // the managed server's host prompt cache
  };
  std::vector<Answer> answers;
};

// The report of a run of `conv` (its settings as run.json records them).
ConversationReport conversation_report(const workloads::Conversation& conv,
                                       const results::RunManifest& run,
                                       const std::vector<CallRecord>& calls);
void write_conversation_markdown(std::ostream& out, const ConversationReport& r);
nlohmann::json to_json(const ConversationReport& r);

}  // namespace kvbench::report
