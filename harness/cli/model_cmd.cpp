#include "harness/cli/model_cmd.h"

#include <array>
#include <iostream>
#include <map>
#include <memory>
#include <optional>
#include <ostream>
#include <span>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/gguf/gguf_io.h"
#include "harness/gguf/synth.h"

namespace kvbench::cli {
namespace {

constexpr std::uint32_t kDefaultCtxTrain = 32768;

std::string human_bytes(std::uint64_t n) {
  constexpr std::array<const char*, 5> kUnits{"B", "KiB", "MiB", "GiB", "TiB"};
  auto v = static_cast<double>(n);
  std::size_t unit = 0;
  while (v >= 1024.0 && unit + 1 < kUnits.size()) {
    v /= 1024.0;
    ++unit;
  }
  return unit == 0 ? fmt::format("{} B", n) : fmt::format("{:.1f} {}", v, kUnits[unit]);
}

std::string join(std::span<const std::string_view> names) {
  std::string out;
  for (std::string_view n : names) {
    out += out.empty() ? "" : ", ";
    out += n;
  }
  return out;
}

// Everything `model info` reports, gathered once for both output formats.
struct ModelSummary {
  std::string path;
  gguf::GgufHeader header;
  std::string name;
  std::string tokenizer;
  std::optional<gguf::ModelShape> shape;
  std::string shape_error;  // why `shape` is empty
  std::map<std::string, std::size_t> tensor_types;
  std::optional<std::uint64_t> kv_f16;
  std::optional<std::uint64_t> kv_q8_0;
};

std::string string_key(const gguf::GgufFile& f, std::string_view key) {
  const gguf::Value* v = f.find(key);
  const auto* s = v ? std::get_if<std::string>(&v->data) : nullptr;
  return s ? *s : std::string{};
}

ModelSummary summarize(const std::string& path) {
  ModelSummary s{path, gguf::read_gguf_header(path), {}, {}, {}, {}, {}, {}, {}};
  const gguf::GgufFile& f = s.header.file;
  s.name = string_key(f, "general.name");
  s.tokenizer = string_key(f, "tokenizer.ggml.model");
  for (const gguf::TensorInfo& t : f.tensors) {
    ++s.tensor_types[std::string(gguf::ggml_type_info(t.type).name)];
  }
  try {
    s.shape = gguf::shape_from_metadata(f);
    s.kv_f16 = gguf::kv_bytes_per_token(*s.shape, gguf::GgmlType::f16, gguf::GgmlType::f16);
    s.kv_q8_0 = gguf::kv_bytes_per_token(*s.shape, gguf::GgmlType::q8_0, gguf::GgmlType::q8_0);
  } catch (const InputError& e) {
    s.shape_error = e.what();
  }
  return s;
}

nlohmann::json optional_json(const std::optional<std::uint64_t>& v) {
  return v ? nlohmann::json(*v) : nlohmann::json(nullptr);
}

nlohmann::json summary_json(const ModelSummary& s) {
  const gguf::GgufFile& f = s.header.file;
  nlohmann::json j = {{"schema", "kvbench.model"},
                      {"schema_version", 1},
                      {"path", s.path},
                      {"file_bytes", s.header.file_bytes},
                      {"gguf_version", f.version},
                      {"name", s.name},
                      {"architecture", string_key(f, "general.architecture")},
                      {"tokenizer_model", s.tokenizer},
                      {"metadata_count", f.metadata.size()},
                      {"tensor_count", f.tensors.size()},
                      {"tensor_types", s.tensor_types},
                      {"tensor_data_offset", f.data_offset}};
  if (s.shape) {
    j["shape"] = *s.shape;
    j["kv_bytes_per_token"] = {{"f16", optional_json(s.kv_f16)},
                               {"q8_0", optional_json(s.kv_q8_0)}};
  } else {
    j["shape_error"] = s.shape_error;
  }
  return j;
}

std::string kv_text(const std::optional<std::uint64_t>& bytes) {
  return bytes ? fmt::format("{} bytes ({})", *bytes, human_bytes(*bytes))
               : std::string("n/a (row not a whole number of blocks)");
}

void print_summary(const ModelSummary& s, std::ostream& out) {
  const gguf::GgufFile& f = s.header.file;
  std::string types;
  for (const auto& [type, count] : s.tensor_types) {
    types += fmt::format("{}{} {}", types.empty() ? "" : ", ", type, count);
  }
  out << fmt::format("file            {} ({}, {} bytes, GGUF v{})\n", s.path,
                     human_bytes(s.header.file_bytes), s.header.file_bytes, f.version);
  out << fmt::format("architecture    {}{}\n", string_key(f, "general.architecture"),
                     s.name.empty() ? "" : fmt::format(" (\"{}\")", s.name));
  out << fmt::format("tensors         {} ({})\n", f.tensors.size(), types);
  if (!s.shape) {
    out << fmt::format("shape           unavailable: {}\n", s.shape_error);
    return;
  }
  const gguf::ModelShape& sh = *s.shape;
  out << fmt::format("layers          {}\n", sh.n_layer);
  out << fmt::format("embedding       {}\n", sh.n_embd);
  out << fmt::format("heads           {} (KV heads {}{}), head dim k {} / v {}, rope dims {}\n",
                     sh.n_head, sh.n_head_kv, sh.n_head_kv_layers.empty() ? "" : ", per layer",
                     sh.head_dim_k, sh.head_dim_v, sh.rope_dims);
  out << fmt::format("feed-forward    {}\n", sh.n_ff);
  out << fmt::format(
      "trained context {}{}\n", sh.n_ctx_train,
      sh.sliding_window ? fmt::format(" (sliding window {})", *sh.sliding_window) : std::string{});
  out << fmt::format("vocabulary      {} (tokenizer {})\n", sh.n_vocab,
                     s.tokenizer.empty() ? "none" : s.tokenizer);
  out << fmt::format("KV per token    f16 {}\n", kv_text(s.kv_f16));
  out << fmt::format("                q8_0 {}\n", kv_text(s.kv_q8_0));
}

}  // namespace

gguf::ModelShape synth_shape(const ModelSynthOptions& o) {
  gguf::ModelShape s;
  if (!o.preset.empty()) {
    const auto preset = gguf::preset_shape(o.preset);
    if (!preset) {
      throw InputError(
          fmt::format("unknown preset '{}' (known: {})", o.preset, join(gguf::preset_names())));
    }
    s = *preset;
  } else {
    if (o.layers == 0 || o.embd == 0 || o.heads == 0 || o.ff == 0) {
      throw InputError("model synth needs --preset, or all of --layers, --embd, --heads and --ff");
    }
    s.n_ctx_train = kDefaultCtxTrain;
    s.n_vocab = gguf::kPresetVocabSize;
  }
  const auto apply = [](std::uint32_t given, std::uint32_t& field) {
    field = given != 0 ? given : field;
  };
  apply(o.layers, s.n_layer);
  apply(o.embd, s.n_embd);
  apply(o.heads, s.n_head);
  s.n_head_kv = o.kv_heads != 0 ? o.kv_heads : (o.preset.empty() ? s.n_head : s.n_head_kv);
  apply(o.ff, s.n_ff);
  apply(o.ctx_train, s.n_ctx_train);
  apply(o.vocab, s.n_vocab);
  s.head_dim_k = s.head_dim_v = s.rope_dims = s.n_embd / s.n_head;
  if (auto problems = gguf::synthetic_shape_problems(s); !problems.empty()) {
    throw InputError(problems);
  }
  return s;
}

void run_model_synth(const ModelSynthOptions& o, std::ostream& out) {
  const gguf::ModelShape s = synth_shape(o);
  const gguf::GgmlType type = o.f32 ? gguf::GgmlType::f32 : gguf::GgmlType::f16;
  gguf::write_synthetic_model(o.output, s, type, o.seed);
  const std::uint64_t bytes = gguf::synthetic_model_bytes(s, type);
  out << fmt::format(
      "wrote {} ({}): llama, {} layers, width {}, {} heads ({} KV), ffn {}, trained context {}, "
      "vocab {}, {} weights, seed {}\n",
      o.output, human_bytes(bytes), s.n_layer, s.n_embd, s.n_head, s.n_head_kv, s.n_ff,
      s.n_ctx_train, s.n_vocab, gguf::ggml_type_info(type).name, o.seed);
}

void run_model_info(const ModelInfoOptions& o, std::ostream& out) {
  const ModelSummary s = summarize(o.path);
  if (o.json) {
    out << summary_json(s).dump(2) << "\n";
  } else {
    print_summary(s, out);
  }
}

void setup_model_command(CLI::App& app) {
  auto* model = app.add_subcommand("model", "Write a synthetic GGUF model, or describe one");
  model->require_subcommand(1);

  auto so = std::make_shared<ModelSynthOptions>();
  auto* synth =
      model->add_subcommand("synth", "Write a llama-architecture GGUF with random weights");
  const auto positive = CLI::Range(1U, 1U << 20);
  synth->add_option("--preset", so->preset, "Shape preset: " + join(gguf::preset_names()));
  synth->add_option("--layers", so->layers, "Layers (blocks)")->check(positive);
  synth->add_option("--embd", so->embd, "Embedding width")->check(positive);
  synth->add_option("--heads", so->heads, "Attention heads")->check(positive);
  synth->add_option("--kv-heads", so->kv_heads, "KV heads (default: heads)")->check(positive);
  synth->add_option("--ff", so->ff, "Feed-forward width")->check(positive);
  synth->add_option("--ctx-train", so->ctx_train, "Trained context length (default 32768)")
      ->check(positive);
  synth
      ->add_option("--vocab", so->vocab, "Vocabulary size, padded with unused tokens (default 512)")
      ->check(positive);
  synth->add_flag("--f32", so->f32, "f32 weights instead of f16");
  synth->add_option("--seed", so->seed, "Random seed of the weights")->capture_default_str();
  synth->add_option("-o,--output", so->output, "Output .gguf file")->required();
  synth->callback([so] { run_model_synth(*so, std::cout); });

  auto io = std::make_shared<ModelInfoOptions>();
  auto* info = model->add_subcommand("info", "Describe a GGUF model (reads only its header)");
  info->add_option("file", io->path, "GGUF file")->required();
  auto out = std::make_shared<OutputOptions>();
  add_output_options(info, *out, {"md", "json"});
  add_format_alias(info, *out, "--json", "json", "Print one JSON object");
  info->callback([io, out] {
    const auto targets = resolve_outputs(*out, {"md", "json"}, "model info");
    write_outputs(targets, [&](std::ostream& stream, const std::string& format) {
      ModelInfoOptions with = *io;
      with.json = format == "json";
      run_model_info(with, stream);
    });
  });
}

}  // namespace kvbench::cli
