// Reading WEKA / kv-cache-tester agentic traces (docs/TRACE_FORMAT.md of
// callanjfox/agentic-coding-analysis): one JSON document per conversation, or a JSON list of
// them. A conversation has block_size and requests[]; a request has t (seconds from its
// conversation's start), type, in, out and hash_ids over full blocks only; a request of type
// "subagent" spawns at its t and nests requests whose t counts from that spawn. Each conversation
// and each subagent is a scope of its own ids (ids are assigned per conversation and a subagent
// starts from a fresh cache), so its ids are renumbered apart from every other scope's; with
// "hash_id_scope": "global" the ids are shared by every scope, as the document says.

#include <algorithm>
#include <istream>
#include <iterator>
#include <limits>
#include <map>
#include <utility>

#include <fmt/format.h>

#include "harness/core/error.h"
#include "harness/workloads/trace/parse_fields.h"
#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads::trace {

using nlohmann::json;

namespace {

constexpr std::int64_t kWekaMaxTokens = std::numeric_limits<int>::max();

class WekaReader {
 public:
  WekaReader(const std::string& file, Trace& out) : file_(file), out_(out) {}

  void conversation(const json& doc, const std::string& path) {
    const detail::Place at{file_, path.empty() ? std::string("the document") : path};
    if (!doc.is_object()) {
      detail::fail(at, "",
                   fmt::format("expected a conversation, a JSON object with block_size "
                               "and requests, got {}",
                               detail::describe_value(doc)));
    }
    const auto block = static_cast<int>(detail::integer_field(doc, "block_size", 1, 1 << 20, at));
    if (!out_.requests.empty() && block != out_.block_tokens) {
      detail::fail(at, "block_size",
                   fmt::format("expected the block size of the conversations before it, {}, "
                               "got {}",
                               out_.block_tokens, block));
    }
    out_.block_tokens = block;
    global_ = doc.contains("hash_id_scope") && doc["hash_id_scope"] == "global";
    requests(doc, path, 0.0, next_scope());
  }

 private:
  std::size_t next_scope() { return global_ ? 0 : scopes_++; }

  // The requests[] of `owner` (a conversation or a subagent), which started at `start_s`.
  void requests(const json& owner, const std::string& path, double start_s, std::size_t scope) {
    const std::string list_path = path.empty() ? "requests" : path + ".requests";
    const detail::Place at{file_, path.empty() ? std::string("the document") : path};
    if (!owner.contains("requests") || !owner["requests"].is_array()) {
      detail::fail(
          at, "requests",
          fmt::format("expected a list of requests, got {}",
                      owner.contains("requests") ? detail::describe_value(owner["requests"])
                                                 : std::string("nothing")));
    }
    double previous_s = 0;
    const json& list = owner["requests"];
    for (std::size_t i = 0; i < list.size(); ++i) {
      const std::string here = fmt::format("{}[{}]", list_path, i);
      const detail::Place item{file_, here};
      const json& row = list[i];
      if (!row.is_object()) {
        detail::fail(
            item, "",
            fmt::format("expected a request, a JSON object, got {}", detail::describe_value(row)));
      }
      const double t_s = detail::time_field(row, "t", item);
      if (t_s < previous_s) {
        detail::fail(item, "t",
                     fmt::format("expected times in non-decreasing order, got {} after {}", t_s,
                                 previous_s));
      }
      previous_s = t_s;
      const std::string type = detail::string_field(row, "type", item);
      if (type == "subagent") {
        requests(row, here, start_s + t_s, next_scope());
      } else {
        request(row, item, start_s + t_s, scope, type);
      }
    }
  }

  void request(const json& row, const detail::Place& at, double due_s, std::size_t scope,
               const std::string& type) {
    Request r;
    r.due_ms = due_s * 1000.0;
    r.input_tokens = static_cast<int>(detail::integer_field(row, "in", 1, kWekaMaxTokens, at));
    r.output_tokens = static_cast<int>(detail::integer_field(row, "out", 0, kWekaMaxTokens, at));
    r.type = type;
    r.origin = at.where;
    r.blocks = detail::id_list(row, "hash_ids", at);
    detail::check_block_count(out_, r, "in", at);
    for (auto& id : r.blocks) {
      id = ids_.try_emplace({scope, id}, ids_.size()).first->second;
    }
    out_.requests.push_back(std::move(r));
  }

  const std::string& file_;
  Trace& out_;
  bool global_ = false;
  std::size_t scopes_ = 0;
  std::map<std::pair<std::size_t, std::uint64_t>, std::uint64_t> ids_;  // (scope, id) -> id
};

}  // namespace

namespace detail {

Trace read_weka(std::istream& in, const std::string& file) {
  Trace t;
  t.format = Format::weka;
  t.block_tokens = 64;
  t.partial_block_has_id = false;
  json doc;
  try {
    doc = json::parse(in);
  } catch (const json::parse_error& e) {
    throw InputError(
        fmt::format("trace '{}' (weka): expected one JSON document, got text that is "
                    "not JSON ({})",
                    file, e.what()));
  }
  WekaReader reader(file, t);
  if (doc.is_array()) {
    for (std::size_t i = 0; i < doc.size(); ++i) {
      reader.conversation(doc[i], fmt::format("[{}]", i));
    }
  } else {
    reader.conversation(doc, "");
  }
  // Conversations and subagents run side by side: one list in arrival order.
  std::stable_sort(t.requests.begin(), t.requests.end(),
                   [](const Request& a, const Request& b) { return a.due_ms < b.due_ms; });
  return t;
}

}  // namespace detail

}  // namespace kvbench::workloads::trace
