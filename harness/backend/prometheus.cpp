#include "harness/backend/prometheus.h"

#include <array>
#include <cmath>
#include <cstdlib>

#include <fmt/format.h>

namespace kvbench::backend {

using nlohmann::json;

namespace {

constexpr std::array<std::string_view, 2> kPrefixes = {"llamacpp:", "vllm:"};

bool known(std::string_view name) {
  for (const auto p : kPrefixes) {
    if (name.substr(0, p.size()) == p) {
      return true;
    }
  }
  return false;
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t' || s.front() == '\r')) {
    s.remove_prefix(1);
  }
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) {
    s.remove_suffix(1);
  }
  return s;
}

// The base name of a series: up to '{'.
std::string_view base_name(std::string_view series) {
  const auto brace = series.find('{');
  return brace == std::string_view::npos ? series : series.substr(0, brace);
}

}  // namespace

json parse_prometheus(std::string_view text) {
  json out = json::object();
  while (!text.empty()) {
    const auto nl = text.find('\n');
    const std::string_view line = trim(text.substr(0, nl));
    text = nl == std::string_view::npos ? std::string_view() : text.substr(nl + 1);
    if (line.empty() || line.front() == '#') {
      continue;
    }
    // The series runs to the closing brace of its labels, else to the first blank.
    std::size_t end = line.find_first_of(" \t{");
    if (end == std::string_view::npos) {
      continue;
    }
    if (line[end] == '{') {
      const auto close = line.find('}', end);
      if (close == std::string_view::npos) {
        continue;
      }
      end = close + 1;
    }
    const std::string_view series = line.substr(0, end);
    if (!known(base_name(series))) {
      continue;
    }
    std::string_view rest = trim(line.substr(end));
    rest = rest.substr(0, rest.find_first_of(" \t"));  // a timestamp may follow
    const std::string value_text(rest);
    char* stop = nullptr;
    const double v = std::strtod(value_text.c_str(), &stop);
    if (value_text.empty() || stop != value_text.c_str() + value_text.size() || !std::isfinite(v)) {
      continue;
    }
    out[std::string(series)] = v;
  }
  return out;
}

results::MetricsScrape scrape_metrics(
    http::Transport& transport, const std::string& root,
    const std::vector<std::pair<std::string, std::string>>& headers) {
  http::Request req;
  req.method = "GET";
  req.url = root + "/metrics";
  req.headers = headers;
  req.timeout = std::chrono::milliseconds(10000);
  const auto res = transport.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    return {
        {},
        res.http_status != 0 ? fmt::format("HTTP {}: {}", res.http_status, res.error) : res.error};
  }
  return {parse_prometheus(res.body).get<std::map<std::string, double>>(), std::nullopt};
}

}  // namespace kvbench::backend
