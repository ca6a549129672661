// kvbench history report: the stored sessions that carry given run labels (the runs of one Slurm
// array, of one commit), host by host. Runs from different hosts are listed per host and never
// pooled: a history gate compares a run only with sessions of its own host class.

#include "harness/cli/history_report.h"

#include <algorithm>
#include <iostream>
#include <map>
#include <memory>
#include <ostream>
#include <set>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include "harness/cli/output.h"
#include "harness/core/error.h"
#include "harness/history/store.h"
#include "harness/report/table.h"

namespace kvbench::cli {

namespace {

struct HistoryReportOptions {
  std::string db;
  std::vector<std::string> labels;  // NAME=VALUE, every one required
  std::string by = "host";
};

// A session's run labels ("k=v, k=v") as a map.
std::map<std::string, std::string> labels_of_session(const std::string& joined) {
  std::map<std::string, std::string> out;
  std::size_t at = 0;
  while (at < joined.size()) {
    const auto end = std::min(joined.find(", ", at), joined.size());
    const std::string part = joined.substr(at, end - at);
    const auto eq = part.find('=');
    if (eq != std::string::npos && eq > 0) {
      out[part.substr(0, eq)] = part.substr(eq + 1);
    }
    at = end + 2;
  }
  return out;
}

std::pair<std::string, std::string> wanted_label(const std::string& label) {
  const auto eq = label.find('=');
  if (eq == std::string::npos || eq == 0) {
    throw InputError(fmt::format("--label: expected NAME=VALUE, got '{}'", label));
  }
  return {label.substr(0, eq), label.substr(eq + 1)};
}

// The group a session belongs to: the run label named by --by, else (for host) the host name
// the session's fingerprint recorded.
std::string report_group_of(const session::SessionInfo& info,
                            const std::map<std::string, std::string>& labels,
                            const std::string& by) {
  if (const auto it = labels.find(by); it != labels.end()) {
    return it->second;
  }
  if (by == "host" && !info.host.hostname.empty()) {
    return info.host.hostname;
  }
  return "(no " + by + ")";
}

report::Table history_report_table() {
  return report::Table({{"group", false},
                        {"host_class", false},
                        {"session", true},
                        {"run_id", false},
                        {"recorded_at", false},
                        {"scenario", false},
                        {"run_labels", false},
                        {"metric", false},
                        {"condition", false},
                        {"variant", false},
                        {"value", true},
                        {"n", true}});
}

// The sessions of a report, group by group.
struct ReportGroups {
  std::map<std::string, report::Table> tables;  // group -> its rows, in session order
  std::map<std::string, std::set<std::string>> classes;
  std::size_t sessions = 0;
};

ReportGroups gather_groups(const history::History& db,
                           const std::vector<std::pair<std::string, std::string>>& wanted,
                           const std::string& by) {
  // Each session's stored values (a session of too few calls to fit may have none).
  std::map<std::int64_t, std::vector<history::StoredValue>> values;
  for (const auto& r : db.rows()) {
    values[r.session_id].push_back(r.value);
  }
  ReportGroups g;
  for (const auto& s : db.list()) {
    const auto labels = labels_of_session(s.info.run_labels);
    const bool match = std::all_of(wanted.begin(), wanted.end(), [&](const auto& w) {
      const auto it = labels.find(w.first);
      return it != labels.end() && it->second == w.second;
    });
    if (!match) {
      continue;
    }
    const std::string group = report_group_of(s.info, labels, by);
    auto& t = g.tables.try_emplace(group, history_report_table()).first->second;
    const std::vector<std::string> head = {group,
                                           s.info.host_class,
                                           std::to_string(s.id),
                                           s.info.run_id,
                                           s.info.recorded_at,
                                           s.info.scenario_name,
                                           s.info.run_labels};
    const auto& stored = values[s.id];
    if (stored.empty()) {
      auto row = head;
      row.insert(row.end(), {"(no session value: too few calls to fit)", "", "", "", ""});
      t.add_row(std::move(row));
    }
    for (const auto& v : stored) {
      auto row = head;
      row.insert(row.end(), {v.metric, v.condition, v.variant, fmt::format("{:.6g}", v.value),
                             std::to_string(v.n)});
      t.add_row(std::move(row));
    }
    g.classes[group].insert(s.info.host_class);
    ++g.sessions;
  }
  return g;
}

// One heading and table per group; under each, its rows without the two columns the heading
// gives.
void write_report_markdown(std::ostream& out, const ReportGroups& g, const std::string& by,
                           const std::string& where, const std::string& filter) {
  out << fmt::format(
      "# kvbench history report: {} sessions by {} from {} ({})\n\nEach {}'s runs are shown "
      "on their own: runs from different hosts are compared per host, never pooled as if "
      "from one machine. Values are the session values the history gate compares (fitted at "
      "the reference point).\n",
      g.sessions, by, where, filter, by);
  for (const auto& [group, t] : g.tables) {
    out << fmt::format("\n## {} {} ({})\n\n", by, group, fmt::join(g.classes.at(group), "; "));
    const auto& columns = t.columns();
    report::Table own({columns.begin() + 2, columns.end()});
    for (const auto& row : t.rows()) {
      own.add_row({row.begin() + 2, row.end()});
    }
    own.write_markdown(out);
  }
}

void run_history_report(const HistoryReportOptions& o, const OutputOptions& out_options,
                        const std::vector<std::string>& formats) {
  std::vector<std::pair<std::string, std::string>> wanted;
  for (const auto& l : o.labels) {
    wanted.push_back(wanted_label(l));
  }
  const auto targets = resolve_outputs(out_options, formats, "history report");
  const auto db = history::History::open(o.db, history::Access::read);
  const ReportGroups groups = gather_groups(*db, wanted, o.by);
  const std::string filter = o.labels.empty()
                                 ? "every session"
                                 : fmt::format("sessions labelled {}", fmt::join(o.labels, ", "));
  if (groups.sessions == 0) {
    throw Error(fmt::format("{}: no stored session for {}", db->where(), filter));
  }
  write_outputs(targets, [&](std::ostream& out, const std::string& format) {
    if (format == "md") {
      write_report_markdown(out, groups, o.by, db->where(), filter);
      return;
    }
    auto all = history_report_table();
    for (const auto& [group, t] : groups.tables) {
      for (const auto& row : t.rows()) {
        all.add_row(row);
      }
    }
    all.write(out, format);
  });
}

}  // namespace

void add_history_report(CLI::App& history_cmd, const std::string& where_help, int& exit_code) {
  auto o = std::make_shared<HistoryReportOptions>();
  auto out = std::make_shared<OutputOptions>();
  const std::vector<std::string> formats = report::Table::formats();
  auto* cmd = history_cmd.add_subcommand(
      "report", "The stored sessions that carry given run labels, host by host (never pooled)");
  cmd->add_option("db", o->db, where_help)->required();
  cmd->add_option("--label", o->labels,
                  "Only sessions whose run carries NAME=VALUE (repeatable: all of them), e.g. "
                  "--label slurm_job=4242");
  cmd->add_option("--by", o->by,
                  "The run label the sessions are grouped by (default host; a session without "
                  "it is grouped by the host name its fingerprint recorded)");
  add_output_options(cmd, *out, formats);
  cmd->callback([o, out, formats, &exit_code] {
    run_history_report(*o, *out, formats);
    exit_code = 0;
  });
}

}  // namespace kvbench::cli
