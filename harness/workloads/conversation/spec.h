#pragma once
// The conversation workload's settings (scenario "workload": {"conversation": {...}}, or the
// top-level "conversation" that earlier scenario files use).

#include <string>
#include <string_view>
#include <vector>

#include "harness/workloads/layers.h"

namespace kvbench::workloads {

// Conversations: each turn resends the whole history (a system prompt shared by every
// conversation, then the conversation's own unique first line, its user messages and the server's
// actual answers) and adds a new user message. `conversations` lists how many conversations take
// turns round-robin in one set; each level and each reuse mode ("on": the history may be reused;
// "off": defeated by a fresh first line every turn and, where the server has the switch,
// cache_prompt false) is one set of a block, the sets in a shuffled order. Conversation k of a set
// is pinned to server slot k mod `slots` where the server kind pins slots. With `concurrent`, the
// conversations of a set are in flight at once, each its own stream: a turn is sent as soon as
// its conversation's previous answer came (and its think time passed) and, where slots are pinned,
// its slot is free.
struct Conversation {
  static constexpr std::string_view kName = "conversation";
  int turns = 0;
  int system_tokens = 256;
  int user_tokens = 64;
  int answer_tokens = 32;
  std::vector<int> conversations = {1};
  std::vector<std::string> reuse = {"on"};
  int slots = 1;            // the managed server's -np
  double think_time_s = 0;  // the least time between a conversation's answer and its next turn
  bool concurrent = false;  // a set's conversations in flight at once
  // Tokens a conversation holds at the end of its last turn, template aside.
  int final_tokens() const { return system_tokens + turns * (user_tokens + answer_tokens); }
};

KVBENCH_WORKLOAD_LAYERS(Conversation)  // its part in each layer (layers.h)

}  // namespace kvbench::workloads
