#include "harness/prompt/prompt.h"

#include <array>
#include <chrono>
#include <random>

#include <fmt/format.h>

namespace kvbench::prompt {

namespace {

constexpr std::array<std::string_view, 96> kWords = {
    "the",     "of",      "and",      "a",       "to",      "in",      "is",      "you",
    "that",    "it",      "he",       "was",     "for",     "on",      "are",     "as",
    "with",    "his",     "they",     "at",      "be",      "this",    "have",    "from",
    "or",      "one",     "had",      "by",      "word",    "but",     "not",     "what",
    "all",     "were",    "we",       "when",    "your",    "can",     "said",    "there",
    "use",     "an",      "each",     "which",   "she",     "do",      "how",     "their",
    "if",      "will",    "up",       "other",   "about",   "out",     "many",    "then",
    "them",    "these",   "so",       "some",    "her",     "would",   "make",    "like",
    "river",   "garden",  "window",   "morning", "letter",  "market",  "engine",  "harbour",
    "silver",  "quiet",   "bright",   "winter",  "station", "paper",   "orchard", "lantern",
    "measure", "cache",   "number",   "token",   "memory",  "server",  "reading", "question",
    "travel",  "village", "mountain", "kitchen", "evening", "history", "careful", "answer"};

std::string join_text(std::string_view first_line, const std::vector<std::string>& words,
                      std::size_t n) {
  std::string s(first_line);
  s += '\n';
  for (std::size_t i = 0; i < n; ++i) {
    if (i > 0) {
      s += ' ';
    }
    s += words[i];
  }
  return s;
}

}  // namespace

std::vector<std::string> filler_words(std::uint64_t seed, std::size_t n) {
  std::mt19937_64 rng(seed);
  std::vector<std::string> out;
  out.reserve(n);
  std::size_t sentence_left = 0;
  for (std::size_t i = 0; i < n; ++i) {
    std::string w(kWords[rng() % kWords.size()]);
    if (sentence_left == 0) {
      w[0] = static_cast<char>(w[0] - 'a' + 'A');
      sentence_left = 6 + rng() % 12;
    }
    if (--sentence_left == 0 || i + 1 == n) {
      w += '.';
    } else if (rng() % 11 == 0) {
      w += ',';
    }
    out.push_back(std::move(w));
  }
  return out;
}

std::string new_run_id() {
  std::random_device rd;
  const auto t =
      static_cast<std::uint64_t>(std::chrono::system_clock::now().time_since_epoch().count());
  std::mt19937_64 mix((static_cast<std::uint64_t>(rd()) << 32) ^ rd() ^ t);
  return fmt::format("{:012x}", mix() & 0xffffffffffffULL);
}

std::string nonce_line(std::string_view run_id, int seq) {
  static constexpr std::string_view kLead = "ABCDEFGHJKLMNPQRSTUVWXYZ";
  const char lead = kLead[static_cast<std::size_t>(seq) % kLead.size()];
  return fmt::format("{}{} run {} call {}", lead, lead, run_id, seq);
}

Built build_prompt(int target, std::string_view first_line, std::uint64_t seed,
                   const CountFn& count) {
  Built b;
  auto counted = [&](const std::string& text) {
    ++b.count_calls;
    return count(text);
  };
  std::vector<std::string> words = filler_words(seed, 64);
  auto grow = [&](std::size_t n) {
    if (words.size() < n) {
      words = filler_words(seed, n);
    }
  };
  // Find an upper bound on the word count, then the largest count that stays within target.
  std::size_t lo = 0;
  std::size_t hi = 16;
  if (counted(join_text(first_line, words, 0)) > target) {
    b.text = join_text(first_line, words, 0);
    b.tokens = count(b.text);
    return b;
  }
  while (true) {
    grow(hi);
    if (counted(join_text(first_line, words, hi)) > target) {
      break;
    }
    lo = hi;
    hi *= 2;
  }
  while (hi - lo > 1) {
    const std::size_t mid = lo + (hi - lo) / 2;
    (counted(join_text(first_line, words, mid)) <= target ? lo : hi) = mid;
  }
  std::string text = join_text(first_line, words, lo);
  int n = counted(text);
  // Pad one character at a time; a character that overshoots is replaced by the next candidate.
  static constexpr std::string_view kPad = " a.e,o;i:u";
  int misses = 0;
  for (std::size_t k = 0; n < target && misses < static_cast<int>(kPad.size()) * 4; ++k) {
    std::string trial = text + kPad[k % kPad.size()];
    const int m = counted(trial);
    if (m <= target) {
      text = std::move(trial);
      n = m;
    } else {
      ++misses;
    }
  }
  b.text = std::move(text);
  b.tokens = n;
  b.exact = n == target;
  return b;
}

}  // namespace kvbench::prompt
