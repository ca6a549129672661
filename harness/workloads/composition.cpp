// The scenario's workload, and the table of the parts that compose with it: the scenario
// layer's side of the table of workloads (workload.h), compiled into the scenario module.

#include <array>
#include <utility>
#include <variant>

#include "harness/scenario/parse_detail.h"
#include "harness/workloads/scenario_workload.h"

namespace kvbench::scenario::detail {

namespace {

constexpr std::size_t kWorkloads = std::variant_size_v<workloads::Workload>;

// Parses the workload named `name` at `path` into `out`; false when no workload has that name.
template <std::size_t I = 0>
bool parse_named(Checker& c, std::string_view name, const json& v, const std::string& path,
                 workloads::Workload& out) {
  if constexpr (I == kWorkloads) {
    return false;
  } else {
    using W = std::variant_alternative_t<I, workloads::Workload>;
    if (W::kName != name) {
      return parse_named<I + 1>(c, name, v, path, out);
    }
    W w;
    parse(c, v, path, w);
    out = std::move(w);
    return true;
  }
}

template <std::size_t... I>
std::vector<std::string> names(std::index_sequence<I...> /*unused*/) {
  return {std::string(std::variant_alternative_t<I, workloads::Workload>::kName)...};
}

std::vector<std::string> workload_names() {
  return names(std::make_index_sequence<kWorkloads>());
}

// What a part of the scenario is to one workload. Not default-constructible, so a row that
// leaves out a workload does not compile.
struct Verdict {
  enum class Kind { accepted, required, refused };
  constexpr Verdict(Kind k, const char* t) : kind(k), text(t) {}
  Kind kind;
  const char* text;  // required: what to give; refused: why, and what to do
};

constexpr Verdict accepts() {
  return {Verdict::Kind::accepted, ""};
}
constexpr Verdict requires_it(const char* what) {
  return {Verdict::Kind::required, what};
}
constexpr Verdict refuses(const char* why) {
  return {Verdict::Kind::refused, why};
}

// A part of the scenario that composes with workloads, and whether this scenario uses it.
struct Part {
  const char* path;
  bool (*given)(const json& doc, const Scenario& s);
  std::array<Verdict, kWorkloads> verdicts;  // in the order of workloads::Workload
};

bool has(const json& doc, const char* key) {
  return doc.contains(key);
}

// Columns: the prompt sweep, the conversation, the trace replay.
const Part kParts[] = {
    {"factors.prompt_tokens",
     [](const json& doc, const Scenario&) {
       return doc.contains("factors") && doc["factors"].is_object() &&
              doc["factors"].contains("prompt_tokens");
     },
     {requires_it("give the prompt lengths in tokens"),
      refuses("a conversation sizes its prompts by its turns: remove factors.prompt_tokens"),
      refuses("a trace's requests give the prompt lengths: remove factors.prompt_tokens")}},
    {"factors.edit_position",
     [](const json&, const Scenario& s) { return !s.factors.edit_position.empty(); },
     {accepts(), refuses("the edit-position experiment and a conversation cannot share a scenario"),
      refuses("the edit-position experiment and a trace cannot share a scenario")}},
    {"repeats",
     [](const json& doc, const Scenario&) { return has(doc, "repeats"); },
     {accepts(), refuses("a conversation repeats by its turns and conversations: remove repeats"),
      refuses("a trace is replayed whole in each server block: remove repeats (block_repeats "
              "starts each server configuration more than once)")}},
    {"max_tokens",
     [](const json& doc, const Scenario&) { return has(doc, "max_tokens"); },
     {accepts(),
      refuses("a conversation's answers are conversation.answer_tokens long: remove max_tokens"),
      refuses("a trace's answers are as long as its requests' output lengths: remove "
              "max_tokens")}},
    {"concurrency",
     [](const json&, const Scenario& s) { return s.concurrency.active(); },
     {accepts(),
      refuses("conversations set their own concurrency: remove concurrency, and put "
              "\"concurrent\": true in the conversation to have a set's conversations "
              "in flight at once"),
      refuses("a trace sets its own concurrency: remove concurrency, and give "
              "workload.trace.timing and workload.trace.concurrency")}},
    {"probes",
     [](const json&, const Scenario& s) { return s.probes.every > 0; },
     {accepts(), refuses("a conversation run has no drift probes: remove probes"),
      refuses("a trace replay has no drift probes: remove probes")}},
    {"precision",
     [](const json&, const Scenario& s) { return s.precision.active(); },
     {accepts(), refuses("precision on demand fits single prompts: remove precision"),
      refuses("precision on demand fits single prompts: remove precision")}},
    {"answers",
     [](const json&, const Scenario& s) { return s.answers.active(); },
     {accepts(), refuses("the answers experiment and a conversation cannot share a scenario"),
      refuses("the answers experiment and a trace cannot share a scenario")}},
    {"unique_first_line",
     [](const json&, const Scenario& s) { return !s.unique_first_line; },
     {accepts(),
      refuses("every conversation starts with its own first line: remove "
              "'unique_first_line': false"),
      accepts()}},
};

// A required part that is missing, named at its first missing level ("factors: missing: give at
// least factors.prompt_tokens").
void missing(Checker& c, const json& doc, const Part& part, const char* what) {
  const std::string path = part.path;
  const auto dot = path.find('.');
  const std::string parent = path.substr(0, dot);
  if (dot != std::string::npos && !doc.contains(parent)) {
    c.problem(parent, "missing: give at least " + path);
  } else if (dot != std::string::npos && !doc[parent].is_object()) {
    return;  // named already: the parent is no object
  } else {
    c.problem(path, std::string("missing: ") + what);
  }
}

}  // namespace

const std::string_view kEarlierWorkloadKey = workloads::Conversation::kName;

void parse_workload(Checker& c, const json& doc, Scenario& s) {
  const std::string earlier(kEarlierWorkloadKey);
  if (doc.contains(earlier)) {  // how earlier scenario files give a conversation
    if (doc.contains("workload")) {
      c.problem(earlier, "give the workload once: move it into \"workload\"");
      return;
    }
    c.set_workload_path(earlier);
    parse_named(c, earlier, doc[earlier], earlier, workloads::of(s));
    return;
  }
  if (!doc.contains("workload")) {
    return;  // the prompt sweep
  }
  const json& v = doc["workload"];
  const auto known = workload_names();
  if (!v.is_object() || v.size() != 1) {
    c.problem("workload", fmt::format("expected an object with exactly one of {} (like "
                                      "{{\"conversation\": {{\"turns\": 8}}}}), got {}",
                                      fmt::join(known, ", "), Checker::describe(v)));
    return;
  }
  const std::string name = v.begin().key();
  const std::string path = "workload." + name;
  c.set_workload_path(path);
  if (!parse_named(c, name, v.begin().value(), path, workloads::of(s))) {
    c.keys(v, "workload", known);
  }
}

void check_composition(Checker& c, const json& doc, const Scenario& s) {
  const std::size_t w = workloads::of(s).index();
  for (const Part& part : kParts) {
    const Verdict& verdict = part.verdicts.at(w);
    const bool given = part.given(doc, s);
    if (verdict.kind == Verdict::Kind::required && !given) {
      missing(c, doc, part, verdict.text);
    } else if (verdict.kind == Verdict::Kind::refused && given) {
      c.problem(part.path, verdict.text);
    }
  }
}

void check_workload(Checker& c, const Scenario& s) {
  std::visit([&](const auto& w) { workloads::check(c, s, w); }, workloads::of(s));
}

void add_workload_json(const Scenario& s, json& resolved) {
  std::visit([&](const auto& w) { workloads::add_to_json(w, resolved); }, workloads::of(s));
}

}  // namespace kvbench::scenario::detail
