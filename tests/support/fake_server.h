#pragma once
// A server kind for tests: FakeBackend counts a word as one token (plus one for BOS), gives each
// word an id, and answers calls on a FakeClock as a script says; FakeServers opens one
// FakeBlock per block, whose server can refuse to start, die after a failed call and come back
// after a number of failed restarts. It is the whole of what a new server kind adds: a Backend
// and a Servers.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/core/error.h"
#include "harness/prompt/edit.h"
#include "harness/run/servers.h"

namespace kvbench::test_support {

// What the fake server does, and what it saw.
struct FakeScript {
  std::chrono::milliseconds ttft{100};  // sent -> first token
  // When set, the time to first token of complete() call `call` with a prompt of `tokens` ids.
  std::function<std::chrono::microseconds(std::size_t tokens, int call)> ttft_of;
  std::chrono::milliseconds token_gap{10};  // between tokens
  backend::Capabilities capabilities{.token_ids = true, .slot_pinning = true};
  std::set<int> failing_calls;        // complete() calls (0-based, over the run) that fail
  bool failure_kills_server = false;  // a failed call leaves its block's server dead
  int failing_restarts = 0;           // restarts that do not bring the server back
  std::set<int> blocks_not_starting;
  std::map<int, int> reported_cache_n;  // complete() call -> the cache_n the server reports
  // Seen:
  int calls = 0;
  int restarts = 0;
  std::vector<int> opened;                                  // block indexes, in order
  std::vector<std::vector<backend::ChatMessage>> messages;  // each complete() call's, in order
  int closed = 0;
};

class FakeBackend final : public backend::Backend {
 public:
  FakeBackend(FakeScript& script, FakeClock& clock, bool& dead)
      : script_(script), clock_(clock), dead_(dead) {}

  std::string_view name() const override { return "fake"; }
  int count_tokens(std::string_view text) override { return static_cast<int>(ids(text).size()); }
  std::vector<int> tokenize(std::string_view text) override {
    return script_.capabilities.token_ids ? ids(text) : std::vector<int>{};
  }

  backend::CallResult complete(const backend::CompletionSpec& spec) override {
    const int call = script_.calls++;
    script_.messages.push_back(spec.messages);
    backend::CallResult r;
    r.trace.sent = clock_.now();
    if (dead_ || script_.failing_calls.count(call) != 0) {
      dead_ = dead_ || script_.failure_kills_server;
      clock_.advance(std::chrono::milliseconds(1));
      r.trace.done = clock_.now();
      r.outcome = kvbench::Outcome::connect_error;
      r.error = "the fake server refused the call";
      return r;
    }
    r.trace.request_out = r.trace.sent;
    if (script_.ttft_of) {
      clock_.advance(script_.ttft_of(ids(spec.prompt).size(), call));
    } else {
      clock_.advance(script_.ttft);
    }
    r.trace.first_byte = clock_.now();
    for (int i = 0; i < spec.max_tokens; ++i) {
      if (i > 0) {
        clock_.advance(script_.token_gap);
      }
      r.trace.token_arrivals.push_back(clock_.now());
      r.trace.token_counts.push_back(1);
      if (spec.watch && !spec.watch(clock_.now(), 1)) {
        r.ended = true;  // as a real backend's stream_call: answered, without the final figures
        break;
      }
    }
    r.trace.done = clock_.now();
    serve(spec, call, r);
    if (r.ended) {
      r.server = {};
    }
    return r;
  }

  // What the server reads and answers: its reuse of the slot's holding, and for a conversation
  // turn the answer, words "a<call>w<i>", one token each; the slot keeps all of them but the
  // last, as llama-server does.
  void serve(const backend::CompletionSpec& spec, int call, backend::CallResult& r) {
    const std::lock_guard<std::mutex> lock(mutex_);
    const auto prompt = ids(spec.prompt);
    auto& slot = slots_[spec.slot];
    const auto reported = script_.reported_cache_n.find(call);
    r.server.cache_n = reported != script_.reported_cache_n.end() ? reported->second
                       : spec.cache_prompt ? prompt::expected_reuse(prompt, slot)
                                           : 0;
    r.server.prompt_n = static_cast<int>(prompt.size()) - *r.server.cache_n;
    r.server.predicted_n = spec.max_tokens;
    slot = prompt;
    if (!spec.messages.empty()) {
      for (int i = 0; i < spec.max_tokens; ++i) {
        r.text += fmt::format("{}a{}w{}", i == 0 ? "" : " ", call, i);
      }
      const auto answer = ids(r.text);
      r.ids.assign(answer.begin() + 1, answer.end());  // no BOS inside a prompt
      if (script_.capabilities.slot_pinning) {
        slot.insert(slot.end(), r.ids.begin(), r.ids.end() - 1);
      }
    }
  }

  http::Request stream_request(const backend::CompletionSpec& spec) const override {
    http::Request req;
    req.url = "fake://slot/" + std::to_string(spec.slot);
    req.body = spec.prompt;
    return req;
  }

  // Each chunk is one token. A conversation turn is served as complete() serves it (its call
  // counted among the complete() calls), once it ended.
  std::unique_ptr<backend::StreamDecoder> open_stream(
      const backend::CompletionSpec& spec) override {
    class Decoder final : public backend::StreamDecoder {
     public:
      Decoder(FakeBackend& be, const backend::CompletionSpec& spec) : be_(be), spec_(spec) {}
      bool feed(std::string_view, Nanos arrival) override {
        r_.trace.token_arrivals.push_back(arrival);
        r_.trace.token_counts.push_back(1);
        return true;
      }
      const kvbench::CallTrace& trace() const override { return r_.trace; }
      backend::CallResult finish(const http::Result& res) override {
        r_.trace.sent = res.started;
        r_.trace.request_out = res.request_out;
        r_.trace.first_byte = res.first_byte;
        r_.trace.done = res.finished;
        r_.outcome = http::call_outcome(res.outcome);
        r_.server.predicted_n = static_cast<int>(r_.trace.token_counts.size());
        if (!spec_.messages.empty()) {
          be_.serve_stream(spec_, r_);
        }
        return r_;
      }

     private:
      FakeBackend& be_;
      backend::CompletionSpec spec_;
      backend::CallResult r_;
    };
    return std::make_unique<Decoder>(*this, spec);
  }

  // A streamed conversation turn that ended: counted, failed as scripted, else served.
  void serve_stream(const backend::CompletionSpec& spec, backend::CallResult& r) {
    int call = 0;
    {
      const std::lock_guard<std::mutex> lock(mutex_);
      call = script_.calls++;
      script_.messages.push_back(spec.messages);
    }
    if (r.outcome != kvbench::Outcome::ok) {
      return;
    }
    if (script_.failing_calls.count(call) != 0) {
      r.outcome = kvbench::Outcome::connect_error;
      r.error = "the fake server refused the call";
      return;
    }
    serve(spec, call, r);
    r.server.predicted_n = static_cast<int>(r.trace.token_counts.size());
  }

  backend::Capabilities capabilities() const override { return script_.capabilities; }
  // "role: content" lines and "assistant:" after them, as a chat template would.
  backend::RenderedChat render_chat(const std::vector<backend::ChatMessage>& messages) override {
    backend::RenderedChat out;
    for (const auto& m : messages) {
      out.text += m.role + ": " + m.content + "\n";
    }
    out.text += "assistant:";
    out.ids = tokenize(out.text);
    return out;
  }
  nlohmann::json describe() override { return {{"fake", true}}; }

  // A restarted server's slot holds nothing.
  void clear_slot() {
    const std::lock_guard<std::mutex> lock(mutex_);
    slots_.clear();
  }

  // BOS, then one id per word.
  static std::vector<int> ids(std::string_view text) {
    std::vector<int> out{1};
    std::size_t i = 0;
    while (i < text.size()) {
      while (i < text.size() && (text[i] == ' ' || text[i] == '\n')) {
        ++i;
      }
      std::uint32_t h = 2166136261U;
      bool word = false;
      for (; i < text.size() && text[i] != ' ' && text[i] != '\n'; ++i) {
        h = (h ^ static_cast<unsigned char>(text[i])) * 16777619U;
        word = true;
      }
      if (word) {
        out.push_back(2 + static_cast<int>(h % 50000U));
      }
    }
    return out;
  }

 private:
  FakeScript& script_;
  FakeClock& clock_;
  bool& dead_;
  std::mutex mutex_;                       // slots_ and the script's counts
  std::map<int, std::vector<int>> slots_;  // what each slot holds
};

class FakeBlock final : public run::BlockServer {
 public:
  FakeBlock(FakeScript& script, FakeClock& clock, int block)
      : script_(script), block_(block), backend_(script, clock, dead_) {}

  backend::Backend& backend() override { return backend_; }
  bool died(results::ServerRestart& restart) override {
    if (!dead_) {
      return false;
    }
    restart.exit = "killed by the script";
    return true;
  }
  bool restart(results::ServerRestart& restart) override {
    if (++script_.restarts <= script_.failing_restarts) {
      restart.error = "the fake server did not come back";
      return false;
    }
    dead_ = false;
    backend_.clear_slot();
    restart.url = "fake://block" + std::to_string(block_);
    return true;
  }
  void after_call(const plan::PlannedCall&) override {}
  void close(results::BlockInfo& info) override {
    info.other["fake_closed"] = true;
    ++script_.closed;
  }

 private:
  FakeScript& script_;
  int block_;
  bool dead_ = false;
  FakeBackend backend_;
};

class FakeServers final : public run::Servers {
 public:
  FakeServers(FakeScript& script, FakeClock& clock) : script_(script), clock_(clock) {}

  run::ServersFound prepare() override {
    return {{{"kind", "fake"}, {"mode", "managed"}}, {{"name", "fake-model"}}, {}};
  }
  std::unique_ptr<run::BlockServer> open(const plan::Block& block, const std::filesystem::path&,
                                         results::BlockInfo& info) override {
    script_.opened.push_back(block.index);
    if (script_.blocks_not_starting.count(block.index) != 0) {
      throw Error("the fake server did not start");
    }
    info.url = "fake://block" + std::to_string(block.index);
    return std::make_unique<FakeBlock>(script_, clock_, block.index);
  }

 private:
  FakeScript& script_;
  FakeClock& clock_;
};

}  // namespace kvbench::test_support
