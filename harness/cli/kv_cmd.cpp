#include "harness/cli/kv_cmd.h"

#include <iostream>
#include <memory>
#include <optional>
#include <ostream>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/core/text.h"
#include "harness/gguf/gguf_io.h"
#include "harness/kv/kv_arith.h"
#include "harness/report/table.h"

namespace kvbench::cli {
namespace {

struct Source {
  std::string description;
  gguf::ModelShape shape;
};

Source resolve_source(const KvOptions& o) {
  const bool explicit_given = o.layers != 0 || o.kv_heads != 0 || o.head_dim != 0;
  const int given =
      (o.model.empty() ? 0 : 1) + (o.preset.empty() ? 0 : 1) + (explicit_given ? 1 : 0);
  if (given != 1) {
    throw InputError(
        "kv needs exactly one of: a GGUF file, --preset NAME, or --layers/--kv-heads/--head-dim");
  }
  if (!o.model.empty()) {
    const auto header = gguf::read_gguf_header(o.model);
    return {o.model, gguf::shape_from_metadata(header.file)};
  }
  if (!o.preset.empty()) {
    const auto shape = kv::kv_preset(o.preset);
    if (!shape) {
      throw InputError(fmt::format("kv --preset: unknown preset '{}' (known: {})", o.preset,
                                   fmt::join(kv::kv_preset_names(), ", ")));
    }
    return {o.preset + " (preset)", *shape};
  }
  return {"explicit shape", kv::explicit_shape(o.layers, o.kv_heads, o.head_dim, o.head_dim_v)};
}

std::string mib(std::uint64_t bytes) {
  return fmt::format("{:.2f} MiB", static_cast<double>(bytes) / (1024.0 * 1024.0));
}

std::string shape_line(const gguf::ModelShape& s) {
  std::string heads = fmt::format("{} KV heads", s.n_head_kv);
  if (!s.n_head_kv_layers.empty()) {
    heads = fmt::format("per-layer KV heads [{}]", fmt::join(s.n_head_kv_layers, ", "));
  }
  return fmt::format("{} layers, {}, head dim {} (K) / {} (V)", s.n_layer, heads, s.head_dim_k,
                     s.head_dim_v);
}

std::vector<std::string> notes(const gguf::ModelShape& s, const KvOptions& o) {
  std::vector<std::string> out{
      "llama.cpp pads n_ctx up to a multiple of 256 cells (and, without a unified cache, each "
      "sequence's share too): totals count the padded cells"};
  if (s.sliding_window) {
    out.push_back(fmt::format(
        "the model has sliding-window layers (window {}): the arithmetic counts every layer at "
        "the full context, an upper bound",
        *s.sliding_window));
  }
  if (o.parallel > 1) {
    out.push_back(o.unified ? "unified cache: all sequences share one stream of -c cells"
                            : "not unified: each sequence gets its own stream of -c / np cells");
  }
  out.emplace_back("n/a: a row of head dim x KV heads numbers is not whole blocks of the type");
  return out;
}

nlohmann::json as_json(const Source& src, const KvOptions& o) {
  nlohmann::json types = nlohmann::json::array();
  for (const auto& a : kv::arithmetic_for_all_types(src.shape)) {
    nlohmann::json t = {{"type", a.name}, {"bytes_per_number", a.bytes_per_number}};
    t["bytes_per_token"] = a.bytes_per_token ? nlohmann::json(*a.bytes_per_token) : nullptr;
    nlohmann::json totals = nlohmann::json::array();
    for (const std::uint64_t c : o.ctx) {
      const kv::CacheLayout layout{c, o.parallel, o.unified};
      totals.push_back(
          {{"n_ctx", c},
           {"cells", kv::cache_cells(layout)},
           {"bytes", a.bytes_per_token ? nlohmann::json(kv::cache_bytes(layout, *a.bytes_per_token))
                                       : nlohmann::json(nullptr)}});
    }
    t["totals"] = totals;
    types.push_back(t);
  }
  return {{"schema", "kvbench.kv"},
          {"schema_version", 1},
          {"source", src.description},
          {"n_layer", src.shape.n_layer},
          {"n_head_kv", src.shape.n_head_kv},
          {"n_head_kv_layers", src.shape.n_head_kv_layers},
          {"head_dim_k", src.shape.head_dim_k},
          {"head_dim_v", src.shape.head_dim_v},
          {"sliding_window", src.shape.sliding_window ? nlohmann::json(*src.shape.sliding_window)
                                                      : nlohmann::json(nullptr)},
          {"n_seq", o.parallel},
          {"unified", o.unified},
          {"ctx_padding", kv::kCtxPadding},
          {"cache_types", types},
          {"notes", notes(src.shape, o)}};
}

void print_table(const Source& src, const KvOptions& o, std::ostream& out) {
  const auto& s = src.shape;
  out << fmt::format("model      {}: {}\n", src.description, shape_line(s));
  out << fmt::format(
      "per token  sum over layers of K + V rows: 2 x {} layers x {} KV heads x {} numbers x "
      "bytes per number\n",
      s.n_layer, s.n_head_kv, s.head_dim_k);
  out << fmt::format("contexts   {} sequence{}{}\n\n", o.parallel, o.parallel == 1 ? "" : "s",
                     o.unified ? ", unified cache" : "");
  out << "| cache | bytes/number | bytes/token |";
  std::string rule = "|---|---:|---:|";
  for (const std::uint64_t c : o.ctx) {
    out << fmt::format(" -c {} ({} cells) |", c, kv::cache_cells({c, o.parallel, o.unified}));
    rule += "---:|";
  }
  out << "\n" << rule << "\n";
  for (const auto& a : kv::arithmetic_for_all_types(s)) {
    out << fmt::format("| {} | {:g} | {} |", a.name, a.bytes_per_number,
                       a.bytes_per_token ? grouped(*a.bytes_per_token) : "n/a");
    for (const std::uint64_t c : o.ctx) {
      out << " "
          << (a.bytes_per_token
                  ? mib(kv::cache_bytes({c, o.parallel, o.unified}, *a.bytes_per_token))
                  : "n/a")
          << " |";
    }
    out << "\n";
  }
  out << "\n";
  for (const auto& n : notes(s, o)) {
    out << "- " << n << "\n";
  }
}

}  // namespace

void run_kv(const KvOptions& o, std::ostream& out) {
  const Source src = resolve_source(o);
  if (src.shape.n_layer == 0 || src.shape.n_head_kv == 0 || src.shape.head_dim_k == 0) {
    throw InputError(
        fmt::format("{}: the shape has no layers, KV heads or head dim", src.description));
  }
  if (o.format == "json") {
    out << as_json(src, o).dump(2) << "\n";
  } else if (o.format == "md") {
    print_table(src, o, out);
  } else {
    std::vector<report::Table::Column> columns{
        {"cache", false}, {"bytes_per_number", true}, {"bytes_per_token", true}};
    for (const std::uint64_t c : o.ctx) {
      columns.push_back({fmt::format("bytes_ctx_{}", c), true});
    }
    report::Table t(std::move(columns));
    for (const auto& a : kv::arithmetic_for_all_types(src.shape)) {
      std::vector<std::string> row{
          std::string(a.name), fmt::format("{:g}", a.bytes_per_number),
          a.bytes_per_token ? std::to_string(*a.bytes_per_token) : std::string()};
      for (const std::uint64_t c : o.ctx) {
        row.push_back(a.bytes_per_token ? std::to_string(kv::cache_bytes({c, o.parallel, o.unified},
                                                                         *a.bytes_per_token))
                                        : std::string());
      }
      t.add_row(std::move(row));
    }
    t.write(out, o.format);
  }
}

void setup_kv_command(CLI::App& app) {
  auto o = std::make_shared<KvOptions>();
  auto* cmd = app.add_subcommand(
      "kv", "KV-cache bytes per token and per context for every cache type llama.cpp accepts");
  const auto positive = CLI::Range(1U, 1U << 20);
  cmd->add_option("model", o->model, "GGUF file (reads only its header)");
  cmd->add_option("--preset", o->preset,
                  fmt::format("A known shape: {}", fmt::join(kv::kv_preset_names(), ", ")));
  cmd->add_option("--layers", o->layers, "Layers (explicit shape)")->check(positive);
  cmd->add_option("--kv-heads", o->kv_heads, "KV heads (explicit shape)")->check(positive);
  cmd->add_option("--head-dim", o->head_dim, "Numbers per K head (explicit shape)")
      ->check(positive);
  cmd->add_option("--head-dim-v", o->head_dim_v, "Numbers per V head (default: --head-dim)")
      ->check(positive);
  cmd->add_option("-c,--ctx,--num-ctx", o->ctx, "Context sizes (-c values), comma-separated")
      ->delimiter(',')
      ->check(CLI::Range(std::uint64_t{1}, std::uint64_t{1} << 32))
      ->capture_default_str();
  cmd->add_option("-n,--parallel", o->parallel, "Parallel sequences (-np)")
      ->check(CLI::Range(1U, 4096U))
      ->capture_default_str();
  cmd->add_flag("--unified", o->unified, "A unified cache (-kvu): sequences share -c cells");
  auto out = std::make_shared<OutputOptions>();
  add_output_options(cmd, *out, {"md", "json", "csv", "tsv"});
  add_format_alias(cmd, *out, "--json", "json", "Print one JSON object");
  cmd->callback([o, out] {
    const auto targets = resolve_outputs(*out, {"md", "json", "csv", "tsv"}, "kv");
    write_outputs(targets, [&](std::ostream& stream, const std::string& format) {
      KvOptions with = *o;
      with.format = format;
      run_kv(with, stream);
    });
  });
}

}  // namespace kvbench::cli
