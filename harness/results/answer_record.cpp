#include "harness/results/answer_record.h"

#include "harness/core/optional_json.h"

namespace kvbench::results {

using nlohmann::json;

void to_json(json& j, const AnswerRecord& a) {
  j = {{"block", a.block},           {"replica", a.replica}, {"start", a.start},
       {"cache_type", a.cache_type}, {"num_ctx", a.num_ctx}, {"variant", a.variant},
       {"prompt", a.prompt}};
  if (a.error) {
    j["error"] = *a.error;
  } else if (a.text) {
    j["text"] = *a.text;
  } else {
    j["ids"] = a.ids;
    j["top"] = a.top;
  }
}

void from_json(const json& j, AnswerRecord& a) {
  a = AnswerRecord{};
  a.block = j.value("block", 0);
  a.replica = j.value("replica", 0);
  a.start = j.value("start", 1);
  a.cache_type = j.value("cache_type", "");
  a.num_ctx = j.value("num_ctx", 0);
  a.variant = j.value("variant", "");
  a.prompt = j.at("prompt").get<int>();
  a.error = optional_at<std::string>(j, "error");
  a.text = optional_at<std::string>(j, "text");
  a.ids = j.value("ids", std::vector<int>{});
  a.top = j.value("top", std::vector<std::vector<std::pair<int, double>>>{});
}

}  // namespace kvbench::results
