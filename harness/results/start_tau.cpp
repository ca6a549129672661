#include "harness/results/start_tau.h"

namespace kvbench::results {

void to_json(nlohmann::json& j, const StartTau& t) {
  j = {{"metric", t.metric},
       {"term", t.term},
       {"relative", t.relative},
       {"tau", t.tau},
       {"df", t.df},
       {"runs", t.runs},
       {"starts", t.starts},
       {"measured", t.measured},
       {"host_class", t.host_class},
       {"server", t.server},
       {"model", t.model}};
}

void from_json(const nlohmann::json& j, StartTau& t) {
  t = {};
  j.at("metric").get_to(t.metric);
  j.at("term").get_to(t.term);
  j.at("relative").get_to(t.relative);
  j.at("tau").get_to(t.tau);
  j.at("df").get_to(t.df);
  t.runs = j.value("runs", std::size_t{0});
  t.starts = j.value("starts", 1.0);
  t.measured = j.value("measured", std::string());
  t.host_class = j.value("host_class", std::string());
  t.server = j.value("server", std::string());
  t.model = j.value("model", std::string());
}

}  // namespace kvbench::results
