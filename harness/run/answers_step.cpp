#include "harness/run/answers_step.h"

#include <cstdint>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/prompt/prompt.h"

namespace kvbench::run {

using nlohmann::json;

namespace {

// One line of answers.jsonl: where the answer came from, and its ids with their top-k, its text
// (a kind without ids), or its error.
results::AnswerRecord answer_line(const plan::Block& block, bool second_start, std::size_t prompt,
                                  const backend::Answer& a) {
  results::AnswerRecord line;
  line.block = block.index;
  line.replica = block.replica;
  line.start = second_start ? 2 : 1;
  line.cache_type = block.config.cache_type;
  line.num_ctx = block.config.num_ctx;
  line.variant = block.config.variant;
  line.prompt = static_cast<int>(prompt);
  if (!a.ok()) {
    line.error = a.error;
  } else if (a.text_only) {
    line.text = a.text;
  } else {
    line.ids = a.ids;
    for (const auto& position : a.top) {
      line.top.emplace_back(position.begin(), position.end());
    }
  }
  return line;
}

}  // namespace

bool AnswersStep::build_prompts(BlockServer& server, const plan::Block& block, RunFolder& folder) {
  if (prompts_.empty() && !s_.answers.texts.empty()) {
    prompts_ = s_.answers.texts;  // the user's own prompts, as they are
  }
  if (!prompts_.empty()) {
    return true;
  }
  try {
    for (int i = 0; i < s_.answers.prompts; ++i) {
      const std::string first =
          fmt::format("kvbench answer prompt {} of {}", i + 1, s_.answers.prompts);
      prompts_.push_back(
          prompt::build_prompt(s_.answers.prompt_tokens, first,
                               s_.seed * std::uint64_t{7919} + static_cast<std::uint64_t>(i),
                               [&](std::string_view t) { return server.backend().count_tokens(t); })
              .text);
    }
  } catch (const Error& e) {
    prompts_.clear();
    folder.progress().note(
        fmt::format("block {}: the answer prompts could not be built: {}", block.index, e.what()));
    return false;
  }
  return true;
}

void AnswersStep::run(BlockServer& server, const plan::Block& block, bool second_start,
                      RunFolder& folder) {
  if (!build_prompts(server, block, folder)) {
    return;
  }
  folder.progress().note(fmt::format("block {}: {} answers{}", block.index, prompts_.size(),
                                     second_start ? " from a second start (the control)" : ""));
  const backend::AnswerSpec spec{s_.answers.tokens, s_.answers.top_k, s_.seed};
  const auto answers = server.answers(prompts_, spec, second_start);
  for (std::size_t i = 0; i < answers.size(); ++i) {
    folder.write_answer(answer_line(block, second_start, i, answers[i]));
  }
}

}  // namespace kvbench::run
