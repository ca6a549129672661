// The synthetic SentencePiece-style vocabulary. llama.cpp's SPM tokenizer turns spaces into "▁",
// then merges adjacent pieces while the merged text is a token (best score first), and spells
// whatever remains with the byte tokens. The pieces below make English come out at a few tokens
// per word, roughly like a small real vocabulary.

#include <array>
#include <set>
#include <string_view>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/gguf/synth.h"

namespace kvbench::gguf {
namespace {

constexpr std::string_view kSpace = "\xE2\x96\x81";  // U+2581, SentencePiece's word boundary

enum class TokenType : std::int32_t { normal = 1, unknown = 2, control = 3, unused = 5, byte = 6 };

// Common short words; every prefix of each (with "▁") becomes a piece, so merges can reach them.
constexpr std::array<std::string_view, 24> kWords{
    "the", "and", "of", "to", "in",   "is",  "it",   "that", "for", "was", "on",   "with",
    "as",  "be",  "at", "by", "this", "are", "from", "or",   "not", "but", "have", "you"};

constexpr std::array<std::string_view, 56> kPairs{
    "th", "he", "in", "er", "an", "re", "on", "at", "en",  "nd",  "ti",  "es",  "or", "te",
    "of", "ed", "is", "it", "al", "ar", "st", "to", "nt",  "ng",  "se",  "ha",  "as", "ou",
    "io", "le", "ve", "co", "me", "de", "hi", "ri", "ro",  "ic",  "ne",  "ea",  "ra", "ce",
    "li", "ch", "ll", "be", "ma", "si", "om", "ur", "ing", "ion", "ent", "ter", "ly", "ow"};

class VocabBuilder {
 public:
  void add(std::string text, TokenType type) {
    if (seen_.insert(text).second) {
      vocab_.tokens.push_back(std::move(text));
      vocab_.scores.push_back(type == TokenType::normal ? next_score_-- : 0.0F);
      vocab_.types.push_back(static_cast<std::int32_t>(type));
    }
  }
  SyntheticVocab take() { return std::move(vocab_); }

 private:
  SyntheticVocab vocab_;
  std::set<std::string, std::less<>> seen_;
  float next_score_ = -1.0F;  // earlier pieces merge first
};

SyntheticVocab base_vocab() {
  VocabBuilder b;
  b.add("<unk>", TokenType::unknown);
  b.add("<s>", TokenType::control);
  b.add("</s>", TokenType::control);
  for (int byte = 0; byte < 256; ++byte) {
    b.add(fmt::format("<0x{:02X}>", byte), TokenType::byte);
  }
  for (std::string_view word : kWords) {
    for (std::size_t n = 2; n <= word.size(); ++n) {
      b.add(std::string(kSpace) + std::string(word.substr(0, n)), TokenType::normal);
    }
  }
  for (std::string_view pair : kPairs) {
    b.add(std::string(pair), TokenType::normal);
  }
  for (char c = 'a'; c <= 'z'; ++c) {
    b.add(std::string(kSpace) + c, TokenType::normal);
  }
  for (char c = 'A'; c <= 'Z'; ++c) {
    b.add(std::string(kSpace) + c, TokenType::normal);
  }
  b.add(std::string(kSpace), TokenType::normal);
  for (char c = '!'; c <= '~'; ++c) {
    b.add(std::string(1, c), TokenType::normal);
  }
  return b.take();
}

}  // namespace

std::uint32_t synthetic_vocab_base_size() {
  static const auto kSize = static_cast<std::uint32_t>(base_vocab().tokens.size());
  return kSize;
}

SyntheticVocab synthetic_vocab(std::uint32_t n_vocab) {
  SyntheticVocab v = base_vocab();
  if (n_vocab < v.tokens.size()) {
    throw InputError(fmt::format("vocabulary size {} is below the synthetic tokenizer's {} tokens",
                                 n_vocab, v.tokens.size()));
  }
  for (std::size_t i = 0; v.tokens.size() < n_vocab; ++i) {
    v.tokens.push_back(fmt::format("<unused_{}>", i));
    v.scores.push_back(0.0F);
    v.types.push_back(static_cast<std::int32_t>(TokenType::unused));
  }
  return v;
}

}  // namespace kvbench::gguf
