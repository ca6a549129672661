#include "harness/kv/server_log.h"

#include <cmath>
#include <regex>

#include "harness/core/optional_json.h"

namespace kvbench::kv {
namespace {

constexpr double kMib = 1024.0 * 1024.0;

// `llama_kv_cache: size = 8.00 MiB ( 4096 cells, 4 layers, 1/1 seqs), K (f16): ..., V (f16): ...`
const std::regex& totals_re() {
  static const std::regex re(
      R"((\w+): +size = *([0-9.]+) MiB \( *(\d+) cells, *(\d+) layers, *(\d+)(?:/ *(\d+))? seqs\), )"
      R"(K \((\w+)\): *([0-9.]+) MiB, V \((\w+)\): *([0-9.]+) MiB)");
  return re;
}

// Older builds: `llama_new_context_with_model: KV self size = 256.00 MiB, K (f16): ..., V ...`
const std::regex& self_size_re() {
  static const std::regex re(
      R"((\w+): +KV self size *= *([0-9.]+) MiB, K \((\w+)\): *([0-9.]+) MiB, )"
      R"(V \((\w+)\): *([0-9.]+) MiB)");
  return re;
}

const std::regex& buffer_re() {
  static const std::regex re(
      R"((\w+): +(\S+) (model|KV|compute|output|RS) buffer size *= *([0-9.]+) MiB)");
  return re;
}

const std::regex& swa_re() {
  static const std::regex re(R"(creating +(non-SWA|SWA) KV cache)");
  return re;
}

template <typename T, typename Same>
void keep_last(std::vector<T>& items, T item, Same&& same) {
  for (T& existing : items) {
    if (same(existing, item)) {
      existing = std::move(item);
      return;
    }
  }
  items.push_back(std::move(item));
}

std::uint64_t mib_to_bytes(double mib) {
  return static_cast<std::uint64_t>(std::llround(mib * kMib));
}

void parse_line(const std::string& line, std::string& cache, ServerLogMemory& out) {
  std::smatch m;
  if (std::regex_search(line, m, swa_re())) {
    cache = m[1] == "SWA" ? "swa" : "non-swa";
    return;
  }
  if (line.find("buffer size") != std::string::npos && std::regex_search(line, m, buffer_re())) {
    BufferSize b{m[3] == "KV" ? cache : "", m[1], m[2], m[3], std::stod(m[4])};
    if (b.kind == "model") {
      cache.clear();  // a new load starts
    }
    keep_last(out.buffers, b, [](const BufferSize& x, const BufferSize& y) {
      return x.cache == y.cache && x.component == y.component && x.backend == y.backend &&
             x.kind == y.kind;
    });
    return;
  }
  KvTotals t;
  if (std::regex_search(line, m, totals_re())) {
    t = {cache,
         m[1],
         std::stod(m[2]),
         std::stoull(m[3]),
         static_cast<std::uint32_t>(std::stoul(m[4])),
         static_cast<std::uint32_t>(std::stoul(m[5])),
         m[6].matched ? std::optional<std::uint32_t>(std::stoul(m[6])) : std::nullopt,
         m[7],
         m[9],
         std::stod(m[8]),
         std::stod(m[10])};
  } else if (std::regex_search(line, m, self_size_re())) {
    t = {cache,           m[1],           std::stod(m[2]), {}, {}, {}, {}, m[3], m[5],
         std::stod(m[4]), std::stod(m[6])};
  } else {
    return;
  }
  keep_last(out.kv, t, [](const KvTotals& x, const KvTotals& y) { return x.cache == y.cache; });
}

}  // namespace

ServerLogMemory parse_server_log(std::string_view text) {
  ServerLogMemory out;
  std::string cache;
  std::size_t pos = 0;
  while (pos < text.size()) {
    std::size_t end = text.find('\n', pos);
    if (end == std::string_view::npos) {
      end = text.size();
    }
    const std::string_view line = text.substr(pos, end - pos);
    pos = end + 1;
    if (line.find("MiB") != std::string_view::npos || line.find("KV cache") != line.npos) {
      parse_line(std::string(line), cache, out);
    }
  }
  return out;
}

std::optional<std::uint64_t> logged_kv_bytes(const ServerLogMemory& memory) {
  if (!memory.kv.empty()) {
    std::uint64_t total = 0;
    for (const KvTotals& t : memory.kv) {
      total += mib_to_bytes(t.size_mib);
    }
    return total;
  }
  return logged_buffer_bytes(memory, "KV");
}

std::optional<std::uint64_t> logged_buffer_bytes(const ServerLogMemory& memory,
                                                 std::string_view kind) {
  std::optional<std::uint64_t> total;
  for (const BufferSize& b : memory.buffers) {
    if (b.kind == kind) {
      total = total.value_or(0) + mib_to_bytes(b.mib);
    }
  }
  return total;
}

void to_json(nlohmann::json& out, const ServerLogMemory& memory) {
  nlohmann::json kv = nlohmann::json::array();
  for (const KvTotals& t : memory.kv) {
    kv.push_back({{"cache", t.cache},
                  {"component", t.component},
                  {"size_mib", t.size_mib},
                  {"cells", or_null(t.cells)},
                  {"layers", or_null(t.layers)},
                  {"seqs", or_null(t.seqs)},
                  {"streams", or_null(t.streams)},
                  {"type_k", t.type_k},
                  {"type_v", t.type_v},
                  {"k_mib", t.k_mib},
                  {"v_mib", t.v_mib}});
  }
  nlohmann::json buffers = nlohmann::json::array();
  for (const BufferSize& b : memory.buffers) {
    buffers.push_back({{"cache", b.cache},
                       {"component", b.component},
                       {"backend", b.backend},
                       {"kind", b.kind},
                       {"mib", b.mib}});
  }
  out = {{"kv", kv}, {"buffers", buffers}, {"kv_bytes", or_null(logged_kv_bytes(memory))}};
}

void from_json(const nlohmann::json& in, ServerLogMemory& memory) {
  memory = {};
  for (const auto& t : in.value("kv", nlohmann::json::array())) {
    memory.kv.push_back({t.value("cache", ""), t.value("component", ""), t.value("size_mib", 0.0),
                         optional_at<std::uint64_t>(t, "cells"),
                         optional_at<std::uint32_t>(t, "layers"),
                         optional_at<std::uint32_t>(t, "seqs"),
                         optional_at<std::uint32_t>(t, "streams"), t.value("type_k", ""),
                         t.value("type_v", ""), t.value("k_mib", 0.0), t.value("v_mib", 0.0)});
  }
  for (const auto& b : in.value("buffers", nlohmann::json::array())) {
    memory.buffers.push_back({b.value("cache", ""), b.value("component", ""),
                              b.value("backend", ""), b.value("kind", ""), b.value("mib", 0.0)});
  }
}

}  // namespace kvbench::kv
