#include "harness/backend/answer.h"

#include <fmt/format.h>

#include "harness/backend/backend.h"

namespace kvbench::backend {

using nlohmann::json;

json answer_body(const std::string& prompt, const AnswerSpec& spec) {
  return {{"prompt", prompt},
          {"n_predict", spec.tokens},
          {"n_probs", spec.top_k},
          {"temperature", 0.0},
          {"top_k", 1},
          {"seed", spec.seed},
          {"return_tokens", true},
          {"cache_prompt", false},
          {"ignore_eos", true},
          {"stream", false}};
}

namespace {

std::vector<std::pair<int, double>> top_of(const json& position) {
  std::vector<std::pair<int, double>> out;
  const auto it = position.find("top_logprobs");
  if (it == position.end() || !it->is_array()) {
    return out;
  }
  for (const auto& t : *it) {
    if (t.is_object() && t.contains("id") && t["id"].is_number_integer() && t.contains("logprob") &&
        t["logprob"].is_number()) {
      out.emplace_back(t["id"].get<int>(), t["logprob"].get<double>());
    }
  }
  return out;
}

}  // namespace

Answer parse_answer(const json& body) {
  Answer a;
  if (!body.is_object() || !body.contains("tokens") || !body["tokens"].is_array()) {
    a.error = "the answer has no token ids (\"tokens\")";
    return a;
  }
  for (const auto& t : body["tokens"]) {
    if (!t.is_number_integer()) {
      a.error = "the answer's token ids are not all integers";
      return a;
    }
    a.ids.push_back(t.get<int>());
  }
  const auto probs = body.find("completion_probabilities");
  if (probs == body.end() || !probs->is_array()) {
    a.error = "the answer has no probabilities (\"completion_probabilities\")";
    return a;
  }
  for (const auto& p : *probs) {
    a.top.push_back(p.is_object() ? top_of(p) : std::vector<std::pair<int, double>>{});
  }
  if (a.top.size() != a.ids.size()) {
    a.error = fmt::format("the answer has {} token ids but probabilities for {} positions",
                          a.ids.size(), a.top.size());
  }
  return a;
}

Answer fetch_answer(http::Transport& transport, const std::string& root, const std::string& api_key,
                    const std::string& prompt, const AnswerSpec& spec) {
  http::Request req;
  req.url = root + "/completion";
  req.body = answer_body(prompt, spec).dump();
  req.timeout = std::chrono::milliseconds(600000);
  req.headers = bearer_header(api_key);
  const auto res = transport.fetch(req);
  if (res.outcome != http::Outcome::ok) {
    Answer a;
    a.error = res.error.empty() ? "the answer request failed" : res.error;
    return a;
  }
  const json j = json::parse(res.body, nullptr, false);
  return parse_answer(j);
}

}  // namespace kvbench::backend
