#pragma once
// Helpers shared by the libFuzzer targets: an invariant check that aborts (so libFuzzer reports
// the input), and chunk splits derived from the input, so that every input is also fed in pieces.

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <string_view>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::fuzz {

// True when `text` can be written into a JSON record (valid UTF-8).
inline bool recordable(const std::string& text) {
  try {
    static_cast<void>(nlohmann::json(text).dump());
    return true;
  } catch (const nlohmann::json::exception&) {
    return false;
  }
}

// Aborts with `what` on stderr unless `ok`: a broken invariant is a finding, like a crash.
inline void check(bool ok, const char* what) {
  if (!ok) {
    std::fprintf(stderr, "kvbench fuzz: invariant broken: %s\n", what);
    std::abort();
  }
}

// FNV-1a of `data` mixed with `salt`: a seed that changes with every byte of the input.
inline std::uint64_t hash(std::string_view data, std::uint64_t salt) {
  std::uint64_t h = 1469598103934665603ULL ^ salt;
  for (const char c : data) {
    h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return h;
}

// splitmix64: a small, fast generator for chunk sizes.
inline std::uint64_t next_random(std::uint64_t& state) {
  std::uint64_t z = (state += 0x9E3779B97F4A7C15ULL);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
  return z ^ (z >> 31);
}

// `data` cut into consecutive chunks (empty ones included) whose sizes come from `seed`: each at
// most a seed-chosen bound of 1..64 bytes. Concatenated, the chunks are exactly `data`.
inline std::vector<std::string_view> random_chunks(std::string_view data, std::uint64_t seed) {
  std::uint64_t state = seed;
  const std::size_t bound = 1 + next_random(state) % 64;
  std::vector<std::string_view> chunks;
  std::size_t pos = 0;
  while (pos < data.size()) {
    const std::size_t n = next_random(state) % (bound + 1);
    chunks.push_back(data.substr(pos, n));
    pos += chunks.back().size();
  }
  return chunks;
}

// `data` one byte per chunk.
inline std::vector<std::string_view> byte_chunks(std::string_view data) {
  std::vector<std::string_view> chunks;
  chunks.reserve(data.size());
  for (std::size_t i = 0; i < data.size(); ++i) {
    chunks.push_back(data.substr(i, 1));
  }
  return chunks;
}

// The input of a fuzz target as text.
inline std::string_view as_text(const std::uint8_t* data, std::size_t size) {
  return {reinterpret_cast<const char*>(data), size};
}

}  // namespace kvbench::fuzz
