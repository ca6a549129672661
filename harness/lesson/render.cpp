#include "harness/lesson/render.h"

#include <fmt/format.h>

namespace kvbench::lesson {

namespace {
nlohmann::json figure_rows(const LabRun& r, const nlohmann::json& figures) {
  auto rows = nlohmann::json::array();
  for (const auto& f : figures.value("figures", nlohmann::json::array())) {
    if (f.value("lab", "") != r.lab.id) {
      continue;
    }
    const auto id = f.value("id", "");
    const auto it = r.outcome.measured.find(id);
    rows.push_back({{"id", id},
                    {"label", f.value("label", id)},
                    {"check", f.value("check", "")},
                    {"lesson", lesson_value_text(f, figures)},
                    {"here", it == r.outcome.measured.end() ? "not measured" : it->second}});
  }
  return rows;
}

nlohmann::json lab_json(const LabRun& r, const nlohmann::json& figures,
                        std::map<std::string, int>& counts) {
  auto checks = nlohmann::json::array();
  for (const auto& c : r.outcome.checks) {
    const auto verdict = std::string(to_string(c.result.verdict));
    ++counts[verdict];
    checks.push_back({{"id", c.id},
                      {"claim", c.claim},
                      {"verdict", verdict},
                      {"tolerance", c.result.tolerance},
                      {"covers", c.covers},
                      {"why", c.result.why}});
  }
  return {{"id", r.lab.id},
          {"title", r.lab.title},
          {"run_dir", r.run_dir},
          {"seconds", r.seconds},
          {"figures", figure_rows(r, figures)},
          {"checks", checks},
          {"notes", r.outcome.notes},
          {"numbers", r.outcome.numbers}};
}
}  // namespace

std::string lesson_value_text(const nlohmann::json& f, const nlohmann::json& figures) {
  if (f.contains("text")) {
    return f["text"].get<std::string>();
  }
  nlohmann::json value = f.value("value", nlohmann::json());
  if (f.contains("from")) {
    const nlohmann::json::json_pointer ptr(f["from"].get<std::string>());
    value = figures.contains(ptr) ? figures[ptr] : nlohmann::json();
  }
  if (!value.is_number()) {
    return "?";
  }
  const auto unit = f.value("unit", "");
  return fmt::format("{:g}{}{}", value.get<double>(), unit.empty() ? "" : " ", unit);
}

nlohmann::json report_json(const std::vector<LabRun>& labs, const RunInfo& info,
                           const nlohmann::json& figures) {
  std::map<std::string, int> counts{{"pass", 0}, {"fail", 0}, {"inconclusive", 0}};
  auto lab_list = nlohmann::json::array();
  for (const auto& r : labs) {
    lab_list.push_back(lab_json(r, figures, counts));
  }
  return {{"schema", "kvbench.lesson"},
          {"schema_version", 1},
          {"lesson",
           {{"about", figures.value("about", "")}, {"machine", figures.value("machine", "")}}},
          {"size", info.size},
          {"server", info.server},
          {"model", info.model},
          {"started", info.started},
          {"seconds", info.seconds},
          {"labs", lab_list},
          {"verdicts", counts}};
}

int report_exit_code(const nlohmann::json& report) {
  const auto& v = report.at("verdicts");
  return v.value("fail", 0) == 0 && v.value("inconclusive", 0) == 0 ? 0 : 1;
}

void write_report_markdown(std::ostream& out, const nlohmann::json& report) {
  const auto& v = report.at("verdicts");
  out << "# kvbench: the lesson, reproduced\n\n";
  out << fmt::format("- size: {}; server: {}; model: {}\n", report.value("size", ""),
                     report.value("server", ""), report.value("model", ""));
  out << fmt::format("- started {}, took {:.0f} s\n", report.value("started", ""),
                     report.value("seconds", 0.0));
  out << fmt::format("- checks: {} pass, {} fail, {} inconclusive\n\n", v.value("pass", 0),
                     v.value("fail", 0), v.value("inconclusive", 0));
  out << fmt::format(
      "The lesson's figures come from {}. Their absolute times belong to that machine and model "
      "and are shown, never judged; the checks test the shape of each claim here.\n",
      report["lesson"].value("machine", "another machine"));
  for (const auto& lab : report.at("labs")) {
    out << fmt::format("\n## {}\n\n", lab.value("title", ""));
    const auto dir = lab.value("run_dir", "");
    out << (dir.empty()
                ? std::string("Not run.\n\n")
                : fmt::format("Run folder `{}` ({:.0f} s).\n\n", dir, lab.value("seconds", 0.0)));
    if (!lab["figures"].empty()) {
      out << "| figure | the lesson | here |\n|---|---|---|\n";
      for (const auto& f : lab["figures"]) {
        out << fmt::format("| {} | {} | {} |\n", f.value("label", ""), f.value("lesson", ""),
                           f.value("here", ""));
      }
      out << "\n";
    }
    for (const auto& c : lab["checks"]) {
      out << fmt::format("- **{}**: {}. {}.", c.value("verdict", ""), c.value("claim", ""),
                         c.value("why", ""));
      const auto tol = c.value("tolerance", "");
      out << (tol.empty() ? std::string() : fmt::format(" Tolerance: {}.", tol));
      const auto covers = c.value("covers", "");
      out << (covers == "machine"      ? " Covers the machine.\n"
              : covers == "this_start" ? " Covers this run's server starts only (another start "
                                         "may move its timings).\n"
                                       : "\n");
    }
    for (const auto& n : lab["notes"]) {
      out << fmt::format("- note: {}\n", n.get<std::string>());
    }
  }
}

}  // namespace kvbench::lesson
