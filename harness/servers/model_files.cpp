#include "harness/servers/model_files.h"

#include <unistd.h>

#include <cstdlib>
#include <vector>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf_io.h"
#include "harness/gguf/model_shape.h"
#include "harness/gguf/synth.h"
#include "harness/servers/server_binary.h"

namespace kvbench::servers {

namespace fs = std::filesystem;

std::string find_llama_server(const std::string& explicit_path) {
  ServerBinary b{"llama-server",
                 "KVBENCH_LLAMA_SERVER",
                 "server.binary",
                 {},
                 ".deps/llama/bin/llama-server above the kvbench executable, "
                 "$XDG_DATA_HOME/kvbench/llama/bin/llama-server",
                 "install one with scripts/get-llama-server.sh (installed: "
                 "<prefix>/share/kvbench/scripts/get-llama-server.sh) or pass --server-bin"};
  std::error_code ec;
  fs::path dir = fs::read_symlink("/proc/self/exe", ec).parent_path();
  for (; !ec && !dir.empty() && dir != dir.root_path(); dir = dir.parent_path()) {
    b.places.push_back(dir / ".deps/llama/bin/llama-server");
  }
  // Where an installed kvbench's get-llama-server.sh puts it: the user's data folder.
  if (const auto data = user_data_dir(); !data.empty()) {
    b.places.push_back(data / "llama/bin/llama-server");
  }
  return find_server_binary(b, explicit_path);
}

fs::path user_data_dir() {
  if (const char* x = std::getenv("XDG_DATA_HOME"); x != nullptr && *x != '\0') {
    return fs::path(x) / "kvbench";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return fs::path(h) / ".local/share/kvbench";
  }
  return {};
}

fs::path default_models_dir() {
  if (const char* d = std::getenv("KVBENCH_MODELS_DIR"); d != nullptr && *d != '\0') {
    return d;
  }
  if (const char* x = std::getenv("XDG_CACHE_HOME"); x != nullptr && *x != '\0') {
    return fs::path(x) / "kvbench/models";
  }
  if (const char* h = std::getenv("HOME"); h != nullptr && *h != '\0') {
    return fs::path(h) / ".cache/kvbench/models";
  }
  return fs::temp_directory_path() / "kvbench-models";
}

std::string resolve_model(const std::string& model, const fs::path& models_dir) {
  if (const auto named = gguf::synthetic_preset(model)) {
    const std::string preset(*named);
    const auto shape = gguf::preset_shape(preset);
    if (!shape) {
      std::vector<std::string> names;
      for (auto n : gguf::preset_names()) {
        names.emplace_back(n);
      }
      throw InputError(
          fmt::format("server.model: unknown synthetic preset '{}': expected one of {}", preset,
                      fmt::join(names, ", ")));
    }
    const fs::path path =
        models_dir / fmt::format("synthetic-{}-v2-seed{}.gguf", preset, kSyntheticSeed);
    if (!fs::exists(path)) {
      std::error_code ec;
      fs::create_directories(models_dir, ec);
      if (ec) {
        throw Error(fmt::format("cannot create the models folder {}: {}", models_dir.string(),
                                ec.message()));
      }
      gguf::write_synthetic_model(path, *shape, gguf::GgmlType::f16, kSyntheticSeed);
    }
    return path.string();
  }
  describe_model_file(model);  // throws a clear InputError for a missing or non-GGUF file
  return model;
}

nlohmann::json describe_model_file(const std::string& path) {
  std::error_code ec;
  const auto size = fs::file_size(path, ec);
  if (ec) {
    throw InputError(fmt::format("server.model: model file {}: {}", path, ec.message()));
  }
  const gguf::GgufHeader header = gguf::read_gguf_header(path);
  nlohmann::json j = {{"path", fs::absolute(path).string()}, {"file_bytes", size}};
  try {
    const auto shape = gguf::shape_from_metadata(header.file);
    j["shape"] = shape;
  } catch (const Error& e) {
    j["shape_error"] = e.what();
  }
  return j;
}

}  // namespace kvbench::servers
