#include "harness/run/run_folder.h"

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/core/version.h"
#include "harness/measure/machine.h"

namespace kvbench::run {

namespace fs = std::filesystem;
using nlohmann::json;

RunFolder::RunFolder(const scenario::Scenario& s, const plan::Plan& plan, const RunOptions& o,
                     const ServersFound& found, const std::string& run_id)
    : o_(o), dir_(results::create_run_dir(o.results_root, s.name)) {
  results::RunManifest& m = run_;
  m.kvbench = {kVersion, kGitRevision, kRecordVersion};
  m.run_id = run_id;
  m.status = "running";
  m.started = utc_now_rfc3339();
  m.scenario_file = s.source;
  m.scenario = s.resolved;
  m.scenario_hash = results::scenario_hash(s.resolved);
  m.plan = plan::to_json(plan);
  m.server = found.server;
  if (m.server.is_object() && !o.found_server.is_null()) {
    m.server["found"] = o.found_server;
  }
  m.model = found.model;
  m.machine = measure::machine_info();
  m.labels = o.labels;
  if (!s.variants.empty()) {
    // The resolved server spec of each variant, with what preparing it found.
    m.variants = s.resolved.value("variants", json::array());
    for (std::size_t i = 0; i < m.variants.size() && i < found.variants_found.size(); ++i) {
      m.variants[i]["found"] = found.variants_found[i];
    }
  }
  save();
  writer_ = std::make_unique<results::RecordWriter>(dir_ / "calls.jsonl");
  progress_ = std::make_unique<Progress>(plan.call_count(), style());
  summary_.run_dir = dir_;
}

RunFolder::RunFolder(const ResumeState& resume, const plan::Plan& plan, const RunOptions& o,
                     const ServersFound& found)
    : o_(o), dir_(resume.run_dir), run_(resume.run) {
  if (run_.plan != plan::to_json(plan)) {
    throw InputError(
        fmt::format("{}: the plan in run.json does not match its scenario: this run "
                    "cannot be resumed",
                    dir_.string()));
  }
  run_.status = "running";
  run_.resumed.push_back({utc_now_rfc3339(), resume.done.size(), found.server, found.model});
  save();
  results::cut_partial_last_line(dir_ / "calls.jsonl");
  writer_ = std::make_unique<results::RecordWriter>(dir_ / "calls.jsonl");
  progress_ = std::make_unique<Progress>(plan.call_count() - resume.done.size(), style());
  summary_.run_dir = dir_;
}

ProgressStyle RunFolder::style() const {
  return ProgressStyle{o_.progress, o_.live_progress, o_.color};
}

void RunFolder::save() {
  results::save_manifest(dir_, run_);
}

// In a block of many streams this runs on the driver's worker thread while the sending thread
// only sends and reads: summary_ and progress_ are touched by no other thread until it ends.
void RunFolder::write(const CallRecord& r) {
  try {
    writer_->append(r);
  } catch (const Error& e) {  // the disk is full, or failing: nothing more can be kept
    throw Error(fmt::format("{}; once there is room, `kvbench run --resume {}` runs the rest",
                            e.what(), dir_.string()));
  }
  ++summary_.calls;
  summary_.failed += r.ok() ? 0 : 1;
  summary_.flagged += r.flags.empty() ? 0 : 1;
  progress_->call_done(r);
}

void RunFolder::add_block(results::BlockInfo info) {
  run_.blocks.push_back(std::move(info));
  save();
}

void RunFolder::write_answer(const results::AnswerRecord& line) {
  if (!answers_) {
    answers_ = std::make_unique<results::RecordWriter>(dir_ / "answers.jsonl");
  }
  answers_->append_json(line);
}

void RunFolder::close(bool complete) {
  summary_.complete = complete;
  run_.status = complete ? "complete" : "incomplete";
  run_.finished = utc_now_rfc3339();
  run_.summary = results::RunTotals{summary_.calls, summary_.failed, summary_.flagged};
  save();
}

}  // namespace kvbench::run
