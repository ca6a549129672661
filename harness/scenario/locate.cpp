#include "harness/scenario/locate.h"

#include <cctype>

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

}  // namespace kvbench::scenario
