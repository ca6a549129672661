#pragma once
// Prometheus text exposition (GET /metrics), as llama-server (--metrics) and vLLM serve it, read
// into counters: a third, independent proof of prompt reuse beside the per-call counts.

#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/http/transport.h"
#include "harness/results/block_facts.h"

namespace kvbench::backend {

// The samples of `text` whose metric name starts with one of kvbench's known prefixes
// ("llamacpp:", "vllm:"), as {series: value}; a series is the name with its labels as written
// ("vllm:prefix_cache_hits_total{model_name=\"m\"}"). Comment lines, other metrics and lines that
// do not parse are left out; a value of NaN or +-Inf is left out. Pure; never throws.
nlohmann::json parse_prometheus(std::string_view text);

// GET <root>/metrics with `headers`: {"samples": {...}} or {"error": "..."} (a server without
// --metrics answers 501 or 404). Never throws.
results::MetricsScrape scrape_metrics(
    http::Transport& transport, const std::string& root,
    const std::vector<std::pair<std::string, std::string>>& headers);

}  // namespace kvbench::backend
