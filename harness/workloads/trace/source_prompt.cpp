// What a replayed request's prompt is made of (source_prompt.h).

#include "harness/workloads/trace/source_prompt.h"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/gguf_io.h"
#include "harness/gguf/model_shape.h"
#include "harness/prompt/prompt.h"
#include "harness/workloads/trace/policy.h"

namespace kvbench::run {

namespace {

namespace tr = workloads::trace;

// A server without a tokenizer endpoint: prompts of ids 1,000 to 4,999.
constexpr std::size_t kFewestIds = 64;
constexpr int kFallbackFirstId = 1000;
constexpr std::size_t kFallbackIds = 4000;

// Text prompts: plain words read alone, at most this many tried, of at most this many tokens.
constexpr std::size_t kWordCandidates = 160;
constexpr std::size_t kLongestWord = 4;
constexpr std::size_t kFewestWords = 8;

std::size_t common_suffix(const std::vector<int>& a, const std::vector<int>& b) {
  std::size_t n = 0;
  while (n < a.size() && n < b.size() && a[a.size() - 1 - n] == b[b.size() - 1 - n]) {
    ++n;
  }
  return n;
}

}  // namespace

std::uint64_t trace_mix(std::uint64_t x) {
  x += 0x9e3779b97f4a7c15ULL;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ULL;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebULL;
  return x ^ (x >> 31);
}

std::vector<int> trace_token_pool(backend::Backend& be, std::uint64_t seed) {
  std::string text;
  for (const auto& w : prompt::filler_words(seed, 800)) {
    text += w + " ";
  }
  const std::vector<int> ids = be.tokenize(text);
  std::set<int> distinct(ids.begin() + (ids.empty() ? 0 : 1), ids.end());
  if (distinct.size() < kFewestIds) {  // no tokenizer endpoint: ids every vocabulary has
    for (int id = kFallbackFirstId; distinct.size() < kFallbackIds; ++id) {
      distinct.insert(id);
    }
  }
  return {distinct.begin(), distinct.end()};
}

void trace_text_words(backend::Backend& be, std::uint64_t seed,
                      std::vector<TraceSource::Word>& words, std::vector<int>& lead,
                      std::vector<int>& trail) {
  std::vector<std::string> texts;
  std::set<std::string> seen;
  for (const auto& w : prompt::filler_words(seed, 4 * kWordCandidates)) {
    const bool plain = !w.empty() && std::all_of(w.begin(), w.end(), [](unsigned char c) {
      return c >= 'a' && c <= 'z';
    });
    if (plain && seen.insert(w).second && texts.size() < kWordCandidates) {
      texts.push_back(" " + w);
    }
  }
  std::vector<std::vector<int>> read;
  if (texts.empty()) {
    throw Error("no plain words to make a text prompt of");
  }
  for (const auto& t : texts) {
    read.push_back(be.tokenize(t));
    if (read.back().empty()) {
      throw Error(
          "a trace is sent to this server kind as text, each prompt checked with the server's "
          "tokenizer, and this server gives no token ids (llama-server's /tokenize does)");
    }
  }
  std::size_t shortest = read.front().size();
  std::size_t before = shortest;
  std::size_t after = shortest;
  for (const auto& r : read) {
    shortest = std::min(shortest, r.size());
    before = std::min(before, tr::common_prefix(read.front(), r));
    after = std::min(after, common_suffix(read.front(), r));
  }
  after = std::min(after, shortest - std::min(shortest, before));
  lead.assign(read.front().begin(), read.front().begin() + static_cast<std::ptrdiff_t>(before));
  trail.assign(read.front().end() - static_cast<std::ptrdiff_t>(after), read.front().end());
  std::set<std::vector<int>> distinct;
  bool single = false;
  for (std::size_t i = 0; i < read.size(); ++i) {
    std::vector<int> ids(read[i].begin() + static_cast<std::ptrdiff_t>(before),
                         read[i].end() - static_cast<std::ptrdiff_t>(after));
    if (!ids.empty() && ids.size() <= kLongestWord && distinct.insert(ids).second) {
      single = single || ids.size() == 1;
      words.push_back({texts[i], std::move(ids)});
    }
  }
  if (!single || words.size() < kFewestWords) {
    throw Error(fmt::format(
        "a trace is sent to this server kind as text, and of {} words the server's tokenizer read "
        "{} as at most {} tokens, {}: too few to make blocks of an exact size",
        texts.size(), words.size(), kLongestWord, single ? "some as one" : "none as one"));
  }
}

double TraceSource::state_bytes_per_token(const std::string& model, const std::string& cache_type) {
  constexpr double kCellBytes = 12;
  const auto type = gguf::ggml_type_from_name(cache_type.empty() ? "f16" : cache_type);
  if (!type) {
    return 0;
  }
  std::optional<gguf::ModelShape> shape;
  try {
    const auto preset = gguf::synthetic_preset(model);
    shape = preset ? gguf::preset_shape(*preset)
                   : gguf::shape_from_metadata(gguf::read_gguf_header(model).file);
  } catch (const std::exception&) {
    return 0;  // the run.json states why the model's shape is not known
  }
  const auto kv = shape ? gguf::kv_bytes_per_token(*shape, *type, *type) : std::nullopt;
  return kv ? static_cast<double>(*kv) + kCellBytes : 0;
}

std::vector<int> TraceSource::prompt_ids(const tr::Request& r, int block_tokens, std::uint64_t seed,
                                         const std::vector<int>& pool) {
  std::vector<int> ids;
  ids.reserve(static_cast<std::size_t>(r.input_tokens));
  for (std::size_t b = 0; b < r.blocks.size(); ++b) {
    const std::uint64_t block_seed = trace_mix(seed ^ trace_mix(r.blocks[b]));
    for (int j = 0; j < block_tokens && static_cast<int>(ids.size()) < r.input_tokens; ++j) {
      const std::uint64_t h = trace_mix(block_seed + static_cast<std::uint64_t>(j));
      ids.push_back(pool[h % pool.size()]);
    }
  }
  // Past the last block id (WEKA's unhashed tail): tokens of the request's own.
  for (std::uint64_t j = 0; static_cast<int>(ids.size()) < r.input_tokens; ++j) {
    ids.push_back(pool[trace_mix(seed ^ trace_mix(~r.blocks.size()) ^ (j << 20)) % pool.size()]);
  }
  return ids;
}

std::pair<std::string, std::vector<int>> TraceSource::prompt_text(const tr::Request& r,
                                                                  int block_tokens,
                                                                  std::uint64_t seed,
                                                                  const std::vector<Word>& words) {
  std::vector<const Word*> singles;
  for (const auto& w : words) {
    if (w.ids.size() == 1) {
      singles.push_back(&w);
    }
  }
  std::string text;
  std::vector<int> ids;
  ids.reserve(static_cast<std::size_t>(r.input_tokens));
  // Words drawn by `draw` until `n` more tokens are read.
  const auto fill = [&](int n, const auto& draw) {
    const std::size_t end = ids.size() + static_cast<std::size_t>(n);
    for (std::uint64_t j = 0; ids.size() < end; ++j) {
      const std::uint64_t h = draw(j);
      const Word* w = &words[h % words.size()];
      if (ids.size() + w->ids.size() > end) {
        w = singles[h % singles.size()];
      }
      text += w->text;
      ids.insert(ids.end(), w->ids.begin(), w->ids.end());
    }
  };
  for (std::size_t b = 0; b < r.blocks.size() && static_cast<int>(ids.size()) < r.input_tokens;
       ++b) {
    const std::uint64_t block_seed = trace_mix(seed ^ trace_mix(r.blocks[b]));
    fill(std::min(block_tokens, r.input_tokens - static_cast<int>(ids.size())),
         [&](std::uint64_t j) { return trace_mix(block_seed + j); });
  }
  fill(r.input_tokens - static_cast<int>(ids.size()),
       [&](std::uint64_t j) { return trace_mix(seed ^ trace_mix(~r.blocks.size()) ^ (j << 20)); });
  return {std::move(text), std::move(ids)};
}
}  // namespace kvbench::run
