#include "harness/results/results.h"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <fstream>
#include <unordered_map>

#include <fmt/format.h>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"

namespace kvbench::results {

namespace fs = std::filesystem;

namespace {
std::string safe_name(const std::string& name) {
  std::string out;
  for (char c : name) {
    const bool keep = std::isalnum(static_cast<unsigned char>(c)) || c == '-' || c == '_';
    out += keep ? c : '-';
  }
  return out.empty() ? "run" : out.substr(0, 64);
}
}  // namespace

void check_writable_folder(const fs::path& results_root, const std::string& what) {
  const std::string named = fmt::format("{} {}", what, results_root.string());
  fs::path existing = results_root.empty() ? fs::path(".") : results_root;
  std::error_code ec;
  while (!fs::exists(existing, ec)) {
    if (!existing.has_relative_path() || existing.parent_path() == existing) {
      throw InputError(fmt::format("{}: no part of the path exists", named));
    }
    existing = existing.parent_path().empty() ? fs::path(".") : existing.parent_path();
  }
  if (!fs::is_directory(existing, ec)) {
    throw InputError(fmt::format("{}: {} is not a folder", named, existing.string()));
  }
  std::string probe = (existing / ".kvbench-write-check-XXXXXX").string();
  const int fd = ::mkstemp(probe.data());
  if (fd < 0) {
    throw InputError(fmt::format("{}: not writable: cannot create a file in {}: {}", named,
                                 existing.string(), std::strerror(errno)));
  }
  ::close(fd);
  ::unlink(probe.c_str());
}

fs::path create_run_dir(const fs::path& results_root, const std::string& scenario_name) {
  std::error_code ec;
  fs::create_directories(results_root, ec);
  if (ec) {
    throw Error(fmt::format("cannot create the results folder {}: {}", results_root.string(),
                            ec.message()));
  }
  const std::time_t now = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&now, &tm);
  const std::string base =
      fmt::format("{:04}{:02}{:02}-{:02}{:02}{:02}-{}", tm.tm_year + 1900, tm.tm_mon + 1,
                  tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec, safe_name(scenario_name));
  for (int i = 0; i < 1000; ++i) {
    const fs::path p = results_root / (i == 0 ? base : fmt::format("{}-{}", base, i));
    if (fs::create_directory(p, ec)) {
      return p;
    }
  }
  throw Error(fmt::format("cannot create a run folder under {}", results_root.string()));
}

void write_json_atomic(const fs::path& path, const nlohmann::json& j) {
  AtomicFileWriter out(path);
  out.write(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  out.commit();
}

RecordWriter::RecordWriter(const fs::path& path) : path_(path) {
  fd_ = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd_ < 0) {
    throw Error(
        fmt::format("cannot open {} for appending: {}", path.string(), std::strerror(errno)));
  }
}

RecordWriter::~RecordWriter() {
  if (fd_ >= 0) {
    ::close(fd_);
  }
}

void RecordWriter::append(const CallRecord& r) {
  append_json(to_json(r));
}

void RecordWriter::append_json(const nlohmann::json& j) {
  // Server text is not always valid UTF-8: replace bad bytes rather than lose the record.
  const std::string line = j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
  const off_t before = ::lseek(fd_, 0, SEEK_END);
  const auto fail = [&](const char* what, int err) {
    if (before >= 0) {
      static_cast<void>(::ftruncate(fd_, before));  // no half record stays behind
    }
    throw Error(
        fmt::format("cannot {} {}: {}; the line was cut off again, every record before it "
                    "is intact",
                    what, path_.string(), std::strerror(err)));
  };
  std::size_t done = 0;
  while (done < line.size()) {
    const ssize_t n = ::write(fd_, line.data() + done, line.size() - done);
    if (n < 0 && errno == EINTR) {
      continue;
    }
    if (n <= 0) {
      fail("append to", n < 0 ? errno : ENOSPC);
    }
    done += static_cast<std::size_t>(n);
  }
  if (::fdatasync(fd_) != 0) {
    fail("flush to disk", errno);
  }
}

bool cut_partial_last_line(const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return false;
  }
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (text.empty() || text.back() == '\n') {
    return false;
  }
  const auto keep = text.rfind('\n');
  fs::resize_file(path, keep == std::string::npos ? 0 : keep + 1);
  return true;
}

RunManifest load_manifest(const fs::path& run_dir) {
  const fs::path run_json = run_dir / "run.json";
  std::ifstream rj(run_json);
  if (!rj) {
    throw InputError(fmt::format("{}: not a kvbench run folder (no run.json)", run_dir.string()));
  }
  const auto manifest = nlohmann::json::parse(rj, nullptr, false);
  if (manifest.is_discarded()) {
    throw InputError(fmt::format("{}: not valid JSON", run_json.string()));
  }
  return manifest_from_json(manifest, run_json.string());
}

void save_manifest(const fs::path& run_dir, const RunManifest& run) {
  write_json_atomic(run_dir / "run.json", nlohmann::json(run));
}

void update_manifest(const fs::path& run_dir, const std::function<void(RunManifest&)>& change) {
  RunManifest run = load_manifest(run_dir);
  change(run);
  save_manifest(run_dir, run);
}

LoadedRun load_run(const fs::path& run_dir) {
  LoadedRun out;
  out.run = load_manifest(run_dir);
  std::ifstream cj(run_dir / "calls.jsonl");
  if (!cj) {
    throw InputError(fmt::format("{}: no calls.jsonl", run_dir.string()));
  }
  std::string line;
  // A call --resume sent again (one an interrupt aborted, or the cold read of a pair cut before
  // its edited read) is recorded again: the repeat takes the earlier record's place, which stays
  // in calls.jsonl.
  std::unordered_map<int, std::size_t> at_seq;  // seq -> index of its record in out.calls
  for (int n = 1; std::getline(cj, line); ++n) {
    if (line.empty()) {
      continue;
    }
    const auto j = nlohmann::json::parse(line, nullptr, false);
    if (j.is_discarded() || !j.is_object() || !j.contains("seq")) {
      out.warnings.push_back(
          fmt::format("calls.jsonl line {}: incomplete or malformed record skipped", n));
      continue;
    }
    try {
      CallRecord r = record_from_json(j);
      if (const auto earlier = at_seq.find(r.seq); earlier != at_seq.end()) {
        out.calls[earlier->second] = std::move(r);
        continue;
      }
      at_seq.emplace(r.seq, out.calls.size());
      out.calls.push_back(std::move(r));
    } catch (const nlohmann::json::exception& e) {
      out.warnings.push_back(fmt::format("calls.jsonl line {}: skipped: {}", n, e.what()));
    }
  }
  std::ifstream aj(run_dir / "answers.jsonl");
  for (int n = 1; aj && std::getline(aj, line); ++n) {
    const auto j = nlohmann::json::parse(line, nullptr, false);
    try {
      if (j.is_discarded() || !j.is_object()) {
        throw Error("not a JSON object");
      }
      out.answers.push_back(j.get<AnswerRecord>());
    } catch (const std::exception&) {
      out.warnings.push_back(
          fmt::format("answers.jsonl line {}: incomplete or malformed record skipped", n));
    }
  }
  return out;
}

}  // namespace kvbench::results
