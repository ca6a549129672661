#include "harness/servers/llama_servers.h"

#include <algorithm>
#include <optional>

#include <fmt/format.h>

#include "harness/backend/answer.h"
#include "harness/backend/llama_server.h"
#include "harness/backend/prometheus.h"
#include "harness/core/error.h"
#include "harness/servers/block_memory.h"
#include "harness/servers/compat_servers.h"
#include "harness/servers/managed_server.h"

namespace kvbench::servers {

namespace fs = std::filesystem;
using nlohmann::json;

namespace {

// The per-slot context a llama-server reports in /props.
int slot_ctx_from(const json& props) {
  const auto it = props.find("default_generation_settings");
  if (it == props.end() || !it->is_object()) {
    return 0;
  }
  return it->value("n_ctx", 0);
}

int longest_prompt_tokens(const plan::Block& block) {
  int n = 0;
  for (const auto& call : block.calls) {
    n = std::max(n, call.prompt_tokens);
  }
  return n;
}

class LlamaBlock final : public run::BlockServer {
 public:
  LlamaBlock(const scenario::Scenario& s, const ServerTarget& target, http::Transport& transport,
             std::chrono::seconds ready_timeout, const plan::Block& block, const fs::path& run_dir,
             results::BlockInfo& info)
      : target_(target), transport_(transport), ready_timeout_(ready_timeout) {
    std::string url = target.spec.url;
    if (target.spec.managed()) {
      launch_ = servers::LlamaServerLaunch{target.binary,
                                           target.model_path,
                                           block.config.num_ctx * block.config.slots,
                                           block.config.cache_type,
                                           target.spec.flash_attn,
                                           target.spec.threads,
                                           block.config.slots,
                                           target.spec.args,
                                           run_dir / fmt::format("server-block{}.log", block.index),
                                           target.api_key};
      launch_.gpu_layers = target.spec.gpu_layers;
      launch_.batch_size =
          block.config.batch_size ? block.config.batch_size : target.spec.batch_size;
      launch_.ubatch_size =
          block.config.ubatch_size ? block.config.ubatch_size : target.spec.ubatch_size;
      info.batch_size = launch_.batch_size;
      info.ubatch_size = launch_.ubatch_size;
      info.log = launch_.log_path.filename().string();
      managed_ = servers::ManagedServer::start(launch_, transport_, ready_timeout_);
      url = managed_->url();
      info.argv = managed_->argv();
      info.pid = managed_->pid();
      info.prompt_cache = servers::prompt_cache_settings(info.argv);
      if (managed_->port_retries() > 0) {
        info.port_retries = managed_->port_retries();
      }
    }
    info.url = url;
    backend_ = make_call_backend(target.spec, transport_, url, target.api_key,
                                 target.spec.managed(), true);
    info.other["props"] = backend::LlamaServerBackend(transport_, url, target.api_key).describe();
    if (managed_) {
      memory_.emplace(managed_->pid(), longest_prompt_tokens(block));
      std::string note;
      slot_ids_ = one_token_request(*backend_, note);
      if (!note.empty()) {
        memory_->add_note(note);
      }
      memory_->after_load();
    }
    if (s.concurrency.active()) {
      info.slot_ctx = slot_ctx_from(info.other["props"]);
    }
    // The server's own counters from here to close(): after the warm-up, before the first call.
    url_ = url;
    counters_at_start_ =
        backend::scrape_metrics(transport_, url_, backend::bearer_header(target.api_key));
  }

  backend::Backend& backend() override { return *backend_; }
  std::vector<int> slot_ids() const override { return slot_ids_; }

  bool died(results::ServerRestart& restart) override {
    if (!managed_ || managed_->running()) {
      return false;
    }
    restart.exit = managed_->exit_description();
    restart.at = utc_now_rfc3339();
    memory_.reset();
    ++deaths_;
    return true;
  }

  bool restart(results::ServerRestart& restart) override {
    try {
      managed_ = servers::ManagedServer::start(launch_, transport_, ready_timeout_);
    } catch (const Error& e) {
      restart.error = e.what();
      return false;
    }
    backend_ =
        make_call_backend(target_.spec, transport_, managed_->url(), target_.api_key, true, true);
    restart.url = managed_->url();
    return true;
  }

  void after_call(const plan::PlannedCall& call) override {
    if (memory_) {
      memory_->after_call(call.prompt_tokens);
    }
  }

  std::vector<backend::Answer> answers(const std::vector<std::string>& prompts,
                                       const backend::AnswerSpec& spec,
                                       bool second_start) override {
    std::unique_ptr<servers::ManagedServer> fresh;
    std::string root = url_;
    if (second_start) {
      if (!target_.spec.managed()) {
        return {};
      }
      servers::LlamaServerLaunch again = launch_;
      again.log_path =
          launch_.log_path.parent_path() /
          (launch_.log_path.stem().string() + "-answers" + launch_.log_path.extension().string());
      try {
        fresh = servers::ManagedServer::start(again, transport_, ready_timeout_);
      } catch (const Error& e) {
        std::vector<backend::Answer> failed(prompts.size());
        for (auto& a : failed) {
          a.error = fmt::format("the second start did not answer: {}", e.what());
        }
        return failed;
      }
      root = fresh->url();
    }
    std::vector<backend::Answer> out;
    out.reserve(prompts.size());
    for (const auto& prompt : prompts) {
      out.push_back(backend::fetch_answer(transport_, root, target_.api_key, prompt, spec));
    }
    if (fresh) {
      fresh->stop();
    }
    return out;
  }

  void close(results::BlockInfo& info) override {
    for (int i = 0; i < deaths_; ++i) {
      info.memory_notes.emplace_back("the server restarted: memory figures were dropped");
    }
    // A restart starts the counters again: they no longer span the block.
    if (deaths_ == 0) {
      info.server_counters = results::ServerCounters{
          counters_at_start_,
          backend::scrape_metrics(transport_, url_, backend::bearer_header(target_.api_key))};
    }
    if (!managed_) {
      return;
    }
    if (memory_) {
      memory_->at_end();
    }
    managed_->stop();
    if (memory_) {
      memory_->write(info, launch_.log_path);
    }
  }

 private:
  const ServerTarget& target_;
  http::Transport& transport_;
  std::chrono::seconds ready_timeout_;
  servers::LlamaServerLaunch launch_;
  std::unique_ptr<servers::ManagedServer> managed_;
  std::unique_ptr<backend::Backend> backend_;
  std::optional<BlockMemory> memory_;
  std::vector<int> slot_ids_;  // what the warm-up left in slot 0
  int deaths_ = 0;
  std::string url_;
  results::MetricsScrape counters_at_start_;
};

}  // namespace

run::ServersFound LlamaServers::prepare() {
  targets_ = prepare_llama_targets(s_, o_, transport_);
  run::ServersFound info{targets_.front().server, targets_.front().model, {}};
  if (!s_.variants.empty()) {
    for (const auto& t : targets_) {
      info.variants_found.push_back({{"server", t.server}, {"model", t.model}});
    }
  }
  return info;
}

const ServerTarget& LlamaServers::target_of(const plan::Block& block) const {
  for (const auto& t : targets_) {
    if (t.variant == block.config.variant) {
      return t;
    }
  }
  throw Error(fmt::format("block {} names variant '{}', which the scenario does not have",
                          block.index, block.config.variant));
}

std::unique_ptr<run::BlockServer> LlamaServers::open(const plan::Block& block,
                                                     const fs::path& run_dir,
                                                     results::BlockInfo& info) {
  return std::make_unique<LlamaBlock>(s_, target_of(block), transport_, o_.ready_timeout, block,
                                      run_dir, info);
}

}  // namespace kvbench::servers
