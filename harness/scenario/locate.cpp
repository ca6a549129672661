#include "harness/scenario/locate.h"

#include <algorithm>
#include <cctype>
#include <vector>

#include <nlohmann/json.hpp>

namespace kvbench::scenario {

namespace {

class Locator {
 public:
  explicit Locator(std::string_view text) : s_(text) {}

  std::map<std::string, int> run() {
    skip();
    value("");
    return lines_;
  }

 private:
  bool at_end() const { return i_ >= s_.size(); }

  void advance() {
    if (s_[i_] == '\n') {
      ++line_;
    }
    ++i_;
  }

  // Whitespace and comments.
  void skip() {
    while (!at_end()) {
      if (std::isspace(static_cast<unsigned char>(s_[i_])) != 0) {
        advance();
      } else if (s_.substr(i_, 2) == "//") {
        while (!at_end() && s_[i_] != '\n') {
          advance();
        }
      } else if (s_.substr(i_, 2) == "/*") {
        i_ += 2;
        while (!at_end() && s_.substr(i_, 2) != "*/") {
          advance();
        }
        i_ = std::min(i_ + 2, s_.size());
      } else {
        return;
      }
    }
  }

  bool string(std::string* out) {
    if (at_end() || s_[i_] != '"') {
      return false;
    }
    ++i_;
    while (!at_end() && s_[i_] != '"') {
      if (s_[i_] == '\\' && i_ + 1 < s_.size()) {
        ++i_;
      }
      if (out != nullptr) {
        out->push_back(s_[i_]);
      }
      advance();
    }
    if (at_end()) {
      return false;
    }
    ++i_;
    return true;
  }

  bool value(const std::string& path) {
    if (at_end()) {
      return false;
    }
    lines_.emplace(path, line_);
    const char c = s_[i_];
    if (c == '{') {
      return object(path);
    }
    if (c == '[') {
      return array(path);
    }
    if (c == '"') {
      return string(nullptr);
    }
    const std::size_t start = i_;
    while (!at_end() && std::string_view(",]} \t\r\n/").find(s_[i_]) == std::string_view::npos) {
      advance();
    }
    return i_ > start;  // nothing read (a stray '}' or '/'): a syntax error, not an empty value
  }

  bool object(const std::string& path) {
    ++i_;
    skip();
    while (!at_end() && s_[i_] != '}') {
      std::string key;
      if (!string(&key)) {
        return false;
      }
      skip();
      if (at_end() || s_[i_] != ':') {
        return false;
      }
      ++i_;
      skip();
      if (!value(path.empty() ? key : path + "." + key)) {
        return false;
      }
      next_item();
    }
    return close();
  }

  // After an item: whitespace, an optional comma, whitespace.
  void next_item() {
    skip();
    if (!at_end() && s_[i_] == ',') {
      ++i_;
      skip();
    }
  }

  // Steps over the closing bracket of an object or array, if there is one.
  bool close() {
    if (!at_end()) {
      ++i_;
    }
    return true;
  }

  bool array(const std::string& path) {
    ++i_;
    skip();
    for (int k = 0; !at_end() && s_[i_] != ']'; ++k) {
      if (!value(path + "[" + std::to_string(k) + "]")) {
        return false;
      }
      next_item();
    }
    return close();
  }

  std::string_view s_;
  std::size_t i_ = 0;
  int line_ = 1;
  std::map<std::string, int> lines_;
};

}  // namespace

std::map<std::string, int> value_lines(std::string_view text) {
  return Locator(text).run();
}

namespace {

// One open object or array while duplicate_keys scans.
struct OpenValue {
  bool object = false;
  std::map<std::string, int> keys;  // key -> line it was given on
  std::string key;                  // the key whose value is being read
  int index = 0;                    // arrays: the element being read
  bool expect_key = true;
};

std::string path_of(const std::vector<OpenValue>& open) {
  std::string path;
  for (const auto& v : open) {
    if (v.object) {
      if (!v.key.empty()) {
        if (!path.empty()) {
          path += '.';
        }
        path += v.key;
      }
    } else {
      path += '[';
      path += std::to_string(v.index);
      path += ']';
    }
  }
  return path;
}

// The string literal starting at text[i] (a '"'), decoded; i is left after its closing quote.
std::string read_string(std::string_view text, std::size_t& i) {
  const std::size_t start = i++;
  while (i < text.size() && text[i] != '"') {
    i += text[i] == '\\' ? 2U : 1U;
  }
  ++i;
  const auto literal = text.substr(start, std::min(i, text.size()) - start);
  const auto decoded = nlohmann::json::parse(literal, nullptr, false);
  return decoded.is_string() ? decoded.get<std::string>() : std::string(literal);
}

}  // namespace

std::vector<DuplicateKey> duplicate_keys(std::string_view text) {
  std::vector<DuplicateKey> out;
  std::vector<OpenValue> open;
  int line = 1;
  for (std::size_t i = 0; i < text.size();) {
    const char ch = text[i];
    if (ch == '\n') {
      ++line;
      ++i;
    } else if (ch == '/' && i + 1 < text.size() && text[i + 1] == '/') {
      while (i < text.size() && text[i] != '\n') {
        ++i;
      }
    } else if (ch == '/' && i + 1 < text.size() && text[i + 1] == '*') {
      i += 2;
      while (i + 1 < text.size() && !(text[i] == '*' && text[i + 1] == '/')) {
        line += text[i] == '\n' ? 1 : 0;
        ++i;
      }
      i += 2;
    } else if (ch == '"') {
      const std::string str = read_string(text, i);
      if (!open.empty() && open.back().object && open.back().expect_key) {
        OpenValue& obj = open.back();
        obj.expect_key = false;
        obj.key = str;
        if (const auto it = obj.keys.find(str); it != obj.keys.end()) {
          out.push_back({path_of(open), it->second, line});
        } else {
          obj.keys.emplace(str, line);
        }
      }
    } else if (ch == '{' || ch == '[') {
      OpenValue v;
      v.object = ch == '{';
      open.push_back(std::move(v));
      ++i;
    } else if (ch == '}' || ch == ']') {
      if (!open.empty()) {
        open.pop_back();
      }
      ++i;
    } else if (ch == ',') {
      if (!open.empty()) {
        if (open.back().object) {
          open.back().expect_key = true;
          open.back().key.clear();
        } else {
          ++open.back().index;
        }
      }
      ++i;
    } else {
      ++i;
    }
  }
  return out;
}

}  // namespace kvbench::scenario
