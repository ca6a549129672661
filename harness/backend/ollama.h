#pragma once
// Ollama's native API: POST /api/generate streamed as newline-delimited JSON, POST /api/show,
// GET /api/ps and GET /api/version. Ollama has no tokenize endpoint, so prompt lengths come from a
// calibration of text length against prompt_eval_count. Request building, stream decoding and the
// calibration fit are pure; OllamaBackend does the I/O through a Transport.

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "harness/backend/answer.h"
#include "harness/backend/backend.h"
#include "harness/core/clock.h"
#include "harness/gguf/model_shape.h"
#include "harness/http/ndjson.h"
#include "harness/http/transport.h"

namespace kvbench::backend {

// What every /api/generate request of a block shares: the model, its context and how long the
// server keeps it loaded after the request.
struct OllamaTarget {
  std::string model;
  int num_ctx = 4096;
  std::string keep_alive = "30m";
  int num_gpu = -1;  // layers on the GPU (options.num_gpu); -1: Ollama's own choice, not sent
  // The batch prompt tokens are read in (options.num_batch); absent: Ollama's own, not sent.
  std::optional<int> num_batch = std::nullopt;
};

// The /api/generate body of a timed call: raw (no template), streamed, greedy, with num_ctx,
// num_predict = max_tokens, temperature 0 and the seed as options. Pure.
nlohmann::json generate_body(const CompletionSpec& spec, const OllamaTarget& target);

// The /api/chat body of a conversation turn: the messages (the model's template applied by the
// server), streamed, with the same options as generate_body. Pure.
nlohmann::json chat_body(const CompletionSpec& spec, const OllamaTarget& target);

// A non-streamed /api/generate body that reads `prompt` and generates `num_predict` tokens
// (the load request and the calibration probes). Pure.
nlohmann::json probe_body(std::string_view prompt, int num_predict, const OllamaTarget& target);

// One decoded line of an /api/generate stream.
struct GenerateEvent {
  enum class Type { partial, final, error };
  Type type = Type::partial;
  // A partial line with a non-empty "response", or /api/chat's "message" content (one token).
  bool has_token = false;
  std::string text;  // an /api/chat line's message content
  std::string error;
  nlohmann::json message;  // the final line as reported, without its "context" token array
};

// Decodes one NDJSON line: {"error":..} is an error; "done": true is final; anything else with
// "done": false is partial. Malformed JSON or a line that is neither is an error saying so.
GenerateEvent decode_generate_line(std::string_view line);

// The same decoding through a whole nlohmann::json document per line. decode_generate_line reads
// a "done": false line's few members without one and uses this for everything else; both give
// the same result for every input.
GenerateEvent decode_generate_line_dom(std::string_view line);

// Normalises a final message: prompt_n = prompt_eval_count, prompt_ms = prompt_eval_duration,
// predicted_n = eval_count, predicted_ms = eval_duration (ns -> ms); a field Ollama omitted
// (it omits zeros) stays absent. cache_n stays absent: Ollama does not report what it reused.
// `raw` keeps the message's metric fields exactly as reported.
ServerTiming parse_ollama_metrics(const nlohmann::json& final_message);

// Decodes a whole /api/generate stream fed in chunks of any size. Pure.
class GenerateStreamDecoder {
 public:
  // Feeds one chunk that arrived at `arrival`; false once an error line has been seen.
  bool feed(std::string_view chunk, Nanos arrival);
  // End of the body: decodes a last line that had no '\n'.
  void finish();
  // Ends the stream (finish()) with the transport's result and returns the call: the trace (sent,
  // first byte, done, token lines), the final line's metrics, and the outcome: "server_error"
  // for an error line, else the transport's outcome (an HTTP 503 from a full queue is
  // "http_error" with its status and message), else "stream_error" without a final line.
  CallResult result(const http::Result& res);

  // Arrival of every line that carried a token (one token each).
  const CallTrace& trace() const { return trace_; }
  bool final_seen() const { return final_seen_; }
  // The error line's message; empty when none arrived.
  const std::string& error() const { return error_; }
  const ServerTiming& server() const { return server_; }
  const nlohmann::json& final_message() const { return final_; }

 private:
  void on_line(const http::NdjsonLine& line);

  http::NdjsonFramer framer_;
  std::vector<http::NdjsonLine> lines_;
  CallTrace trace_;
  bool final_seen_ = false;
  std::string error_;
  ServerTiming server_;
  std::string text_;
  nlohmann::json final_ = nlohmann::json::object();
};

// Text length (bytes) to prompt_eval_count, fitted by least squares over probe requests.
struct TokenCalibration {
  double intercept = 0;                             // tokens of an empty prompt (BOS and the like)
  double tokens_per_byte = 0;                       // slope
  std::vector<std::pair<std::size_t, int>> points;  // (bytes, tokens the server counted) per probe
  // What counted each probe's tokens: Ollama's prompt_eval_count, or usage.prompt_tokens.
  std::string counted_by = "prompt_eval_count";
  // The estimated token count of `text`: the fitted line, rounded, at least 1.
  int estimate(std::string_view text) const;
  nlohmann::json to_json() const;
};

// Fits the line through (bytes, tokens) points. Throws kvbench::Error for fewer than two
// distinct lengths or a slope that is not positive. Pure.
TokenCalibration fit_calibration(const std::vector<std::pair<std::size_t, int>>& points);

// A GGUF-style shape from /api/show's "model_info" (architecture-prefixed keys). A vocabulary
// left out of a non-verbose answer reads as 0. Throws kvbench::InputError naming a missing key.
gguf::ModelShape shape_from_model_info(const nlohmann::json& model_info);

// The /api/ps entry of `model` ("name" or "model" equal to it, ":latest" implied); nullopt when
// the model is not loaded. Pure.
std::optional<nlohmann::json> find_ps_entry(const nlohmann::json& ps, const std::string& model);

// What an Ollama request answered when it did not work: the status and the server's message.
struct OllamaReply {
  http::Outcome outcome = http::Outcome::ok;
  long http_status = 0;
  std::string error;
  nlohmann::json body;  // the parsed body when ok
  bool ok() const { return outcome == http::Outcome::ok && error.empty(); }
};

class OllamaBackend final : public Backend {
 public:
  // base_url like "http://127.0.0.1:11434".
  OllamaBackend(http::Transport& transport, std::string base_url, OllamaTarget target);

  std::string_view name() const override { return "ollama"; }
  // The calibrated estimate; throws kvbench::Error before calibrate() succeeded.
  int count_tokens(std::string_view text) override;
  // Always empty: Ollama has no tokenize endpoint.
  std::vector<int> tokenize(std::string_view text) override;
  // Streams one completion; never throws for a server fault. A call that reports its
  // prompt_eval_count refines the calibration with its prompt's length.
  CallResult complete(const CompletionSpec& spec) override;
  // The streamed POST /api/generate of one call (generate_body), or /api/chat for a conversation
  // turn (chat_body), with the spec's timeout. Pure.
  http::Request generate_request(const CompletionSpec& spec) const;
  http::Request stream_request(const CompletionSpec& spec) const override {
    return generate_request(spec);
  }
  // A GenerateStreamDecoder whose ok result refines the calibration (refine_calibration).
  std::unique_ptr<StreamDecoder> open_stream(const CompletionSpec& spec) override;
  // No token ids, no slot pinning (Ollama picks the slot); a call's load_duration and total
  // include its wait for a free slot.
  Capabilities capabilities() const override {
    return {.token_ids = false, .slot_pinning = false, .queue_in_durations = true};
  }
  // Nothing: /api/chat applies the template out of sight.
  RenderedChat render_chat(const std::vector<ChatMessage>&) override { return {}; }
  // Adds an ok call's (prompt bytes, prompt_eval_count) to the calibration; anything else, or
  // no calibration yet, leaves it as it is. Never throws.
  void refine_calibration(std::size_t prompt_bytes, const CallResult& call);
  // {"version": GET /api/version, "show": POST /api/show without the tokenizer arrays}.
  nlohmann::json describe() override;

  // GET /api/version (a short timeout): how a running server is recognised.
  OllamaReply version();
  // POST /api/show for the target model.
  OllamaReply show();
  // GET /api/ps.
  OllamaReply ps();
  // A non-streamed generate of `prompt` (num_predict tokens) with the target's num_ctx.
  OllamaReply generate_once(std::string_view prompt, int num_predict);
  // A greedy answer, text only (/api/generate not streamed: temperature 0, top_k 1, the seed,
  // `spec.tokens` predicted); never throws, a failure is an Answer with an error.
  Answer answer_text(const std::string& prompt, const AnswerSpec& spec);
  // Unloads the model (keep_alive 0): the next request loads it into a fresh runner.
  OllamaReply unload();
  // Sends each probe text (one word generated), fits and keeps the calibration. Throws
  // kvbench::Error naming the server's answer when a probe fails or reports no count.
  const TokenCalibration& calibrate(const std::vector<std::string>& probe_texts);
  void set_calibration(TokenCalibration c) { calibration_ = std::move(c); }
  const std::optional<TokenCalibration>& calibration() const { return calibration_; }
  const std::string& base_url() const { return base_url_; }

 private:
  OllamaReply call(std::string method, const std::string& path, std::string body,
                   std::chrono::milliseconds timeout);

  http::Transport& transport_;
  std::string base_url_;
  OllamaTarget target_;
  std::optional<TokenCalibration> calibration_;
};

}  // namespace kvbench::backend
