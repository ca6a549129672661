#include "harness/servers/ollama_serve.h"

#include <string>

#include <fmt/format.h>

namespace kvbench::servers {

ProcessLaunch ollama_serve_launch(const OllamaServeConfig& c, int port) {
  ProcessLaunch p;
  p.name = "ollama serve";
  p.argv = {c.binary, "serve"};
  p.env_set = {{"OLLAMA_HOST", fmt::format("127.0.0.1:{}", port)},
               {"OLLAMA_KV_CACHE_TYPE", c.cache_type},
               {"OLLAMA_FLASH_ATTENTION", c.flash_attn ? "1" : "0"},
               {"OLLAMA_NUM_PARALLEL", std::to_string(c.num_parallel)},
               {"OLLAMA_MAX_LOADED_MODELS", "1"}};
  p.log_path = c.log_path;
  p.url = fmt::format("http://127.0.0.1:{}", port);
  p.ready_path = "/api/version";
  return p;
}

}  // namespace kvbench::servers
