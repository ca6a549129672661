#include "harness/servers/ollama_servers.h"

#include <cstdlib>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/ggml_types.h"
#include "harness/measure/proc_tree.h"
#include "harness/process/child.h"
#include "harness/process/ports.h"
#include "harness/prompt/prompt.h"
#include "harness/servers/ollama_serve.h"
#include "harness/servers/server_binary.h"
#include "harness/servers/server_target.h"

namespace kvbench::servers {

namespace fs = std::filesystem;
using nlohmann::json;

std::string find_ollama(const std::string& explicit_path) {
  const ServerBinary b{"ollama",
                       "KVBENCH_OLLAMA",
                       "server.binary",
                       {},
                       "",
                       "install Ollama (https://ollama.com), pass --server-bin, or attach to a "
                       "running server with --url http://127.0.0.1:11434"};
  return find_server_binary(b, explicit_path);
}

std::vector<std::string> calibration_probes(std::string_view run_id, std::uint64_t seed,
                                            std::size_t max_bytes) {
  std::vector<std::string> out;
  const auto words = prompt::filler_words(seed, 384);
  int k = 0;
  for (const std::size_t n : {8U, 32U, 128U, 384U}) {
    std::string text = fmt::format("ZZ calibration {} probe {}\n", run_id, k++);
    for (std::size_t i = 0; i < n; ++i) {
      text += (i == 0 ? "" : " ") + words[i];
    }
    if (text.size() > max_bytes && out.size() >= 2) {
      break;
    }
    out.push_back(std::move(text));
  }
  return out;
}

std::string missing_model_message(const std::string& model, const std::string& url,
                                  const std::string& server_error) {
  return fmt::format(
      "the Ollama server at {} does not have the model '{}' ({}): fetch it with `ollama pull {}` "
      "or fix server.model",
      url, model, server_error, model);
}

OllamaServers::OllamaServers(const scenario::Scenario& s, http::Transport& transport,
                             std::string run_id, std::chrono::seconds ready_timeout)
    : s_(s), transport_(transport), run_id_(std::move(run_id)), ready_timeout_(ready_timeout) {}

OllamaServers::~OllamaServers() = default;

std::unique_ptr<servers::ManagedServer> OllamaServers::start_server(const std::string& cache_type,
                                                                    int num_parallel,
                                                                    const fs::path& log_path,
                                                                    results::BlockInfo& info) {
  servers::OllamaServeConfig c{binary_, cache_type, s_.server.flash_attn != "off", log_path,
                               num_parallel};
  servers::ProcessLaunch launch;  // the last one tried
  const auto launch_for = [&](int port) {
    launch = servers::ollama_serve_launch(c, port);
    return launch;
  };
  info.log = log_path.filename().string();
  auto server = servers::ManagedServer::start_on_free_port(launch_for, transport_, ready_timeout_);
  json env = json::object();
  for (const auto& [k, v] : launch.env_set) {
    env[k] = v;
  }
  info.argv = launch.argv;
  info.other["env"] = env;
  if (server->port_retries() > 0) {
    info.port_retries = server->port_retries();
  }
  info.pid = server->pid();
  return server;
}

void OllamaServers::check_server(backend::OllamaBackend& be, json& server, json& model) {
  const auto v = be.version();
  if (!v.ok()) {
    throw Error(fmt::format(
        "no Ollama server answers at {} (GET /api/version: {}); start it with `ollama serve` or "
        "fix server.url",
        be.base_url(), v.error));
  }
  server["version"] = v.body.value("version", "");
  const auto show = be.show();
  if (show.http_status == 404) {
    throw InputError(missing_model_message(s_.server.model, be.base_url(), show.error));
  }
  if (!show.ok()) {
    throw Error(fmt::format("POST {}/api/show failed: {}", be.base_url(), show.error));
  }
  const json described = be.describe();
  model["show"] = described.value("show", json::object());
  const json details = show.body.value("details", json::object());
  model["quantization_level"] = details.value("quantization_level", "");
  try {
    const auto shape = backend::shape_from_model_info(show.body.value("model_info", json()));
    model["shape"] = shape;
    json kv = json::object();
    for (const auto& t : s_.factors.cache_type) {
      if (const auto type = gguf::ggml_type_from_name(t)) {
        if (const auto b = gguf::kv_bytes_per_token(shape, *type, *type)) {
          kv[t] = *b;
        }
      }
    }
    model["kv_bytes_per_token"] = kv;
  } catch (const Error& e) {
    model["shape_error"] = e.what();
  }
}

run::ServersFound OllamaServers::prepare() {
  try {
    api_key_from(s_.server);
  } catch (const InputError& e) {
    throw InputError(fmt::format("{}: {}", s_.source, e.what()));
  }
  run::ServersFound found;
  found.server = {{"kind", scenario::to_string(s_.server.kind)},
                  {"mode", s_.server.managed() ? "managed" : "attached"}};
  check(found.server, found.model);
  return found;
}

namespace {

class OllamaBlock final : public run::BlockServer {
 public:
  OllamaBlock(OllamaServers& servers, backend::OllamaBackend& be, plan::Block block,
              fs::path run_dir)
      : servers_(servers), be_(&be), block_(std::move(block)), run_dir_(std::move(run_dir)) {}
  backend::Backend& backend() override { return *be_; }
  bool died(results::ServerRestart&) override { return false; }
  bool restart(results::ServerRestart&) override { return false; }
  void after_call(const plan::PlannedCall&) override {}
  void close(results::BlockInfo& info) override {
    servers_.close_block(info);
    be_ = nullptr;  // gone with the block
  }
  // Text only: Ollama's /api/generate gives no token ids.
  std::vector<backend::Answer> answers(const std::vector<std::string>& prompts,
                                       const backend::AnswerSpec& spec,
                                       bool second_start) override {
    if (second_start) {
      return servers_.answers_on_second_start(block_, run_dir_, prompts, spec);
    }
    std::vector<backend::Answer> out;
    if (be_ != nullptr) {
      for (const auto& p : prompts) {
        out.push_back(be_->answer_text(p, spec));
      }
    }
    return out;
  }

 private:
  OllamaServers& servers_;
  backend::OllamaBackend* be_;
  plan::Block block_;
  fs::path run_dir_;
};

}  // namespace

std::unique_ptr<run::BlockServer> OllamaServers::open(const plan::Block& block,
                                                      const fs::path& run_dir,
                                                      results::BlockInfo& info) {
  try {
    return std::make_unique<OllamaBlock>(*this, open_block(block, run_dir, info), block, run_dir);
  } catch (const Error&) {
    close_block(info);
    throw;
  }
}

void OllamaServers::check(json& server, json& model) {
  model = {{"name", s_.server.model}};
  if (!s_.server.managed()) {
    server["url"] = s_.server.url;
    backend::OllamaBackend be(transport_, s_.server.url, {s_.server.model});
    check_server(be, server, model);
    const std::string warning = fmt::format(
        "attached to Ollama at {}: the KV cache type is a server setting (OLLAMA_KV_CACHE_TYPE) "
        "that kvbench can neither vary nor read; the records carry the scenario's cache_type",
        s_.server.url);
    fmt::print(stderr, "warning: {}\n", warning);
    server["warnings"] = json::array({warning});
    if (s_.concurrency.active()) {
      const std::string parallel = fmt::format(
          "attached to Ollama at {}: how many calls it serves at once (OLLAMA_NUM_PARALLEL, "
          "default 1) is a server setting kvbench can neither set nor read; calls beyond it wait "
          "in the server's queue, and each block's server_queue says where they did",
          s_.server.url);
      fmt::print(stderr, "warning: {}\n", parallel);
      server["warnings"].push_back(parallel);
    }
    return;
  }
  binary_ = find_ollama(s_.server.binary);
  server["binary"] = binary_;
  const char* store = std::getenv("OLLAMA_MODELS");
  server["model_store"] = store != nullptr ? std::string(store) : "~/.ollama/models (default)";
  // A short-lived server answers the checks before the run folder exists.
  const fs::path log = fs::temp_directory_path() / fmt::format("kvbench-{}-check.log", run_id_);
  results::BlockInfo info;
  std::unique_ptr<servers::ManagedServer> check;
  try {
    check = start_server(s_.factors.cache_type.front(), 1, log, info);
    backend::OllamaBackend be(transport_, check->url(), {s_.server.model});
    check_server(be, server, model);
  } catch (...) {
    check.reset();
    std::error_code ec;
    fs::remove(log, ec);
    throw;
  }
  check->stop();
  std::error_code ec;
  fs::remove(log, ec);
}

results::ApiPsMemory OllamaServers::record_ps(backend::OllamaBackend& be) {
  results::ApiPsMemory out;
  const auto ps = be.ps();
  if (!ps.ok()) {
    out.error = ps.error;
    return out;
  }
  const auto entry = backend::find_ps_entry(ps.body, s_.server.model);
  if (!entry) {
    out.error = "the model is not in GET /api/ps";
    return out;
  }
  out.ps = *entry;
  const auto number = [&](const char* key) -> const json* {
    const auto it = entry->find(key);
    return it != entry->end() && it->is_number() ? &*it : nullptr;
  };
  if (const json* v = number("size")) {
    out.size_bytes = v->get<std::uint64_t>();
  }
  if (const json* v = number("size_vram")) {
    out.size_vram_bytes = v->get<std::uint64_t>();
  }
  if (const json* v = number("context_length")) {
    out.context_length = v->get<std::int64_t>();
  }
  return out;
}

backend::OllamaTarget OllamaServers::target_of(const plan::Block& block) const {
  return {s_.server.model, block.config.num_ctx, "30m", s_.server.gpu_layers,
          block.config.batch_size ? block.config.batch_size : s_.server.batch_size};
}

void OllamaServers::record_concurrency(results::BlockInfo& block) const {
  if (!s_.concurrency.active()) {
    return;
  }
  json& info = block.other;
  if (!s_.server.managed()) {
    block.num_parallel = std::nullopt;
    block.num_parallel_unknown = true;
    info["num_parallel_note"] =
        "attached: the server's OLLAMA_NUM_PARALLEL is unknown to kvbench; server_queue shows "
        "whether calls waited for a slot";
  }
  if (block.api_ps_after_load && block.api_ps_after_load->context_length) {
    // Ollama's context_length is per slot
    block.slot_ctx = static_cast<int>(*block.api_ps_after_load->context_length);
  }
  info["reuse_prediction"] =
      "none: Ollama picks the slot of each call itself (no id_slot), so what a call could reuse "
      "is not known in advance";
}

backend::OllamaBackend& OllamaServers::open_block(const plan::Block& block, const fs::path& run_dir,
                                                  results::BlockInfo& block_info) {
  json& info = block_info.other;
  std::string url = s_.server.url;
  if (s_.server.managed()) {
    managed_ = start_server(block.config.cache_type, block.config.slots,
                            run_dir / fmt::format("server-block{}.log", block.index), block_info);
    block_info.num_parallel = block.config.slots;
    url = managed_->url();
  }
  block_info.url = url;
  block_info.batch_size = target_of(block).num_batch;
  backend_ = std::make_unique<backend::OllamaBackend>(transport_, url, target_of(block));
  const auto load = backend_->generate_once("Hello", 1);
  if (!load.ok()) {
    throw Error(fmt::format("loading '{}' with num_ctx {} failed: {}", s_.server.model,
                            block.config.num_ctx, load.error));
  }
  info["load"] = backend::parse_ollama_metrics(load.body).raw;
  if (load.body.contains("load_duration") && load.body["load_duration"].is_number()) {
    info["load_ms"] = load.body["load_duration"].get<double>() / 1e6;
  }
  results::ApiPsMemory memory = record_ps(*backend_);
  if (managed_) {
    memory.process = measure::read_tree_memory(managed_->pid());
  }
  block_info.api_ps_after_load = memory;
  record_concurrency(block_info);
  if (calibration_) {
    backend_->set_calibration(*calibration_);
  } else {
    const auto probes =
        calibration_probes(run_id_, s_.seed, static_cast<std::size_t>(block.config.num_ctx) / 2);
    calibration_ = backend_->calibrate(probes);
    info["calibration"] = calibration_->to_json();
  }
  return *backend_;
}

std::vector<backend::Answer> OllamaServers::answers_on_second_start(
    const plan::Block& block, const fs::path& run_dir, const std::vector<std::string>& prompts,
    const backend::AnswerSpec& spec) {
  std::vector<backend::Answer> out;
  std::unique_ptr<servers::ManagedServer> fresh;
  std::string url = s_.server.url;
  try {
    if (s_.server.managed()) {
      results::BlockInfo scratch;
      fresh =
          start_server(block.config.cache_type, block.config.slots,
                       run_dir / fmt::format("server-block{}-answers.log", block.index), scratch);
      url = fresh->url();
    }
  } catch (const Error& e) {
    out.resize(prompts.size());
    for (auto& a : out) {
      a.text_only = true;
      a.error = fmt::format("the second start did not answer: {}", e.what());
    }
    return out;
  }
  backend::OllamaBackend be(transport_, url, target_of(block));
  if (!fresh) {
    be.unload();  // attached: the next request loads the model into a fresh runner
  }
  for (const auto& p : prompts) {
    out.push_back(be.answer_text(p, spec));
  }
  if (fresh) {
    fresh->stop();
  }
  return out;
}

void OllamaServers::close_block(results::BlockInfo& block_info) {
  json& info = block_info.other;
  if (backend_) {
    results::ApiPsMemory end = record_ps(*backend_);
    if (managed_) {
      end.process = measure::read_tree_memory(managed_->pid());
    }
    block_info.api_ps_at_end = end;
    if (backend_->calibration()) {
      calibration_ = backend_->calibration();  // refined by the block's calls
      info["calibration_at_end"] = {{"intercept_tokens", calibration_->intercept},
                                    {"tokens_per_byte", calibration_->tokens_per_byte},
                                    {"points", calibration_->points.size()}};
    }
  }
  if (managed_) {
    managed_->stop();
    managed_.reset();
  }
  backend_.reset();
}

}  // namespace kvbench::servers
