#pragma once
// Memory of one managed server block, for run.json: resident memory after load (read after a
// one-token request, before any long prompt), after the block's longest prompt, and at the end
// with the peak (VmHWM); the KV cache and buffer sizes the server logged at load; GPU memory
// where nvidia-smi works. A log without KV lines leaves a note, never a failure.

#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/backend.h"
#include "harness/measure/proc_tree.h"
#include "harness/results/manifest.h"

namespace kvbench::servers {

// Sends a one-token prompt (one token predicted) so that what every request touches is resident
// before memory is read. Returns the prompt's token ids (what the server's slot now holds);
// empty, with `note` set, when the server could not tokenize or answer.
std::vector<int> one_token_request(backend::Backend& be, std::string& note);

class BlockMemory {
 public:
  BlockMemory(int pid, int longest_prompt_tokens)
      : pid_(pid), longest_prompt_tokens_(longest_prompt_tokens) {}

  // Reads /proc (and nvidia-smi) once the server has answered the one-token request.
  void after_load();
  // Reads /proc after a call of `prompt_tokens`, when that is the block's longest prompt.
  void after_call(int prompt_tokens);
  // Reads /proc (and nvidia-smi) before the server is stopped.
  void at_end();
  void add_note(std::string note) { notes_.push_back(std::move(note)); }

  // Adds the memory fields to the block's run.json object; parses the server log at `log_path`
  // (call after the server has stopped).
  void write(results::BlockInfo& block, const std::filesystem::path& log_path) const;

 private:
  int pid_;
  int longest_prompt_tokens_;
  std::optional<measure::TreeMemory> after_load_;
  std::optional<measure::TreeMemory> after_longest_;
  std::optional<measure::TreeMemory> at_end_;
  std::optional<std::uint64_t> gpu_after_load_;
  std::optional<std::uint64_t> gpu_at_end_;
  bool gpu_present_ = false;
  std::vector<std::string> notes_;
};

}  // namespace kvbench::servers
