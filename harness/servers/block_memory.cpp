#include "harness/servers/block_memory.h"

#include <fstream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/kv/server_log.h"
#include "harness/measure/gpu.h"

namespace kvbench::servers {
namespace {

constexpr const char* kOneTokenPrompt = "0";

std::optional<std::uint64_t> gpu_of(const measure::TreeMemory& m) {
  return measure::gpu_memory_of(m.pids);
}

std::string read_text(const std::filesystem::path& path) {
  std::ifstream in(path);
  std::ostringstream s;
  s << in.rdbuf();
  return s.str();
}

}  // namespace

std::vector<int> one_token_request(backend::Backend& be, std::string& note) {
  std::vector<int> ids;
  try {
    ids = be.tokenize(kOneTokenPrompt);
  } catch (const Error& e) {
    note = fmt::format("the one-token request could not be tokenized: {}", e.what());
    return {};
  }
  backend::CompletionSpec spec;
  spec.prompt = kOneTokenPrompt;
  spec.max_tokens = 1;
  spec.timeout = std::chrono::milliseconds(120000);
  const auto res = be.complete(spec);
  if (res.outcome != Outcome::ok) {
    note = fmt::format("the one-token request failed ({}: {}); memory after load was read anyway",
                       to_string(res.outcome), res.error);
  }
  return ids;
}

void BlockMemory::after_load() {
  after_load_ = measure::read_tree_memory(pid_);
  if (after_load_) {
    gpu_after_load_ = gpu_of(*after_load_);
    gpu_present_ = !measure::gpu_devices().empty();
  }
}

void BlockMemory::after_call(int prompt_tokens) {
  if (prompt_tokens == longest_prompt_tokens_) {
    if (auto m = measure::read_tree_memory(pid_)) {
      after_longest_ = m;
    }
  }
}

void BlockMemory::at_end() {
  at_end_ = measure::read_tree_memory(pid_);
  if (at_end_ && gpu_present_) {
    gpu_at_end_ = gpu_of(*at_end_);
  }
}

void BlockMemory::write(results::BlockInfo& info, const std::filesystem::path& log_path) const {
  results::ServerMemory& block = info.memory;
  std::vector<std::string>& notes = info.memory_notes;
  notes.insert(notes.end(), notes_.begin(), notes_.end());
  block.after_load = after_load_;
  if (!after_load_) {
    notes.emplace_back("the server process was gone when memory after load was read");
  }
  if (after_longest_) {
    block.after_longest_prompt = after_longest_;
    block.longest_prompt_tokens = longest_prompt_tokens_;
  }
  if (at_end_) {
    block.at_end = at_end_;
    block.peak_rss_bytes = at_end_->peak_rss_bytes;
  }
  if (gpu_present_) {
    block.gpu_read = true;
    block.gpu_after_load_bytes = gpu_after_load_;
    block.gpu_at_end_bytes = gpu_at_end_;
  }
  const kv::ServerLogMemory logged = kv::parse_server_log(read_text(log_path));
  block.server_log = logged;
  if (const auto kv_bytes = kv::logged_kv_bytes(logged)) {
    block.kv_bytes_logged = *kv_bytes;
  } else {
    notes.push_back(
        fmt::format("the server's log ({}) has no KV cache size lines (they need -lv 4 on "
                    "recent builds); memory is from /proc only",
                    log_path.filename().string()));
  }
}

}  // namespace kvbench::servers
