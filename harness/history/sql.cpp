#include "harness/history/sql.h"

#include <cctype>
#include <charconv>
#include <cstdlib>

#include <fmt/format.h>

namespace kvbench::history {

std::string as_text(const SqlValue& v) {
  if (const auto* s = std::get_if<std::string>(&v)) {
    return *s;
  }
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return fmt::format("{}", *d);
  }
  return "";
}

std::int64_t as_int(const SqlValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    return *i;
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return static_cast<std::int64_t>(*d);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    std::int64_t out = 0;
    std::from_chars(s->data(), s->data() + s->size(), out);
    return out;
  }
  return 0;
}

double as_real(const SqlValue& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    return *d;
  }
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    return static_cast<double>(*i);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    return std::strtod(s->c_str(), nullptr);
  }
  return 0.0;
}

bool is_postgresql_url(std::string_view where) {
  return where.starts_with("postgresql://") || where.starts_with("postgres://");
}

std::string sqlite_placeholders(std::string_view sql) {
  std::string out;
  out.reserve(sql.size());
  for (std::size_t i = 0; i < sql.size(); ++i) {
    const bool placeholder = sql[i] == '$' && i + 1 < sql.size() &&
                             std::isdigit(static_cast<unsigned char>(sql[i + 1])) != 0;
    out += placeholder ? '?' : sql[i];
  }
  return out;
}

}  // namespace kvbench::history
