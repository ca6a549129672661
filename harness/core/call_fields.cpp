#include "harness/core/call_fields.h"

#include <fmt/format.h>

namespace kvbench {

namespace {

using describe::of;
using R = CallRecord;
using C = ClientTiming;
using S = ServerTiming;

bool has_pair(const R& r) {
  return r.pair_id.has_value();
}

// The fields that are columns come first, in column order: those every version had, then each
// added field after them, so that an output gains columns at its end.
std::vector<describe::Field<R>> described() {
  return {
      of<R>("seq", &R::seq).column("seq").min(0).require().must(),
      of<R>("block", &R::block).column("block").min(0).require(),
      of<R>("round", &R::round).column("round").min(-1),
      of<R>("kind", &R::kind).column("kind").one_of(call_kind_names()).require(),
      of<R>("num_ctx", &R::num_ctx).column("num_ctx", "tokens").min(1).require(),
      of<R>("cache_type", &R::cache_type).column("cache_type").require(),
      of<R>("prompt_tokens", &R::prompt_tokens).column("prompt_tokens", "tokens").min(0).require(),
      of<R>("prompt_tokens_counted", &R::prompt_tokens_counted)
          .column("prompt_tokens_counted", "tokens")
          .min(0),
      of<R>("t_start_s", &R::t_start_s).column("t_start_s", "s").min(0).require(),
      of<R>("outcome", &R::outcome).column("outcome").one_of(outcome_names()).require(),
      of<R>("client.ttft_ms", &R::client, &C::ttft_ms).column("ttft_ms", "ms").min(0),
      of<R>("client.decode_tps", &R::client, &C::decode_tps)
          .column("decode_tps", "tokens/s")
          .min(0),
      of<R>("client.e2e_ms", &R::client, &C::e2e_ms).column("e2e_ms", "ms").min(0),
      of<R>("client.tokens", &R::client, &C::tokens).column("tokens", "tokens").min(0),
      of<R>("server.prompt_n", &R::server, &S::prompt_n).column("server_prompt_n", "tokens").min(0),
      of<R>("server.cache_n", &R::server, &S::cache_n).column("server_cache_n", "tokens").min(0),
      of<R>("expected_cache_n", &R::expected_cache_n).column("expected_cache_n", "tokens").min(0),
      of<R>("server.prompt_ms", &R::server, &S::prompt_ms).column("server_prompt_ms", "ms").min(0),
      of<R>("server.predicted_n", &R::server, &S::predicted_n)
          .column("server_predicted_n", "tokens")
          .min(0),
      of<R>("server.predicted_ms", &R::server, &S::predicted_ms)
          .column("server_predicted_ms", "ms")
          .min(0),
      of<R>("flags", &R::flags).column("flags").require(),
      of<R>("variant", &R::variant).column("variant").omit_empty(),
      // Added to the CSV with the list (the history's calls table had them).
      of<R>("wall_start", &R::wall_start).column("wall_start"),
      of<R>("http_status", &R::http_status).column("http_status"),
      of<R>("server.decode_tps", &R::server, &S::decode_tps)
          .column("server_decode_tps", "tokens/s")
          .min(0),
      of<R>("stream", &R::stream).column("stream").min(0),
      of<R>("in_flight", &R::in_flight).column("in_flight").min(1),
      of<R>("queue_ms", &R::queue_ms).column("queue_ms", "ms"),
      // Added with the batch sizes: columns of the runs that set them.
      of<R>("batch_size", &R::batch_size).column("batch_size", "tokens").min(1).only_where_given(),
      of<R>("ubatch_size", &R::ubatch_size)
          .column("ubatch_size", "tokens")
          .min(1)
          .only_where_given(),
      // Not columns.
      of<R>("version", &R::version).one_of({1, kRecordVersion}).require(),
      of<R>("run_id", &R::run_id).require(),
      of<R>("nonce", &R::nonce).require(),
      of<R>("error", &R::error),
      of<R>("cpu_mhz", &R::cpu_mhz).above(0),
      of<R>("slots", &R::slots).min(1),
      describe::group<R>("client").require(),
      of<R>("client.token_ms", &R::client, &C::token_ms),
      of<R>("client.first_byte_ms", &R::client, &C::first_byte_ms).min(0),
      of<R>("client.request_out_ms", &R::client, &C::request_out_ms).min(0),
      of<R>("client.first_event_ms", &R::client, &C::first_event_ms).min(0),
      of<R>("client.first_reasoning_ms", &R::client, &C::first_reasoning_ms).min(0),
      of<R>("client.reasoning_tokens", &R::client, &C::reasoning_tokens).min(0).omit_empty(),
      describe::group<R>("server").require(),
      of<R>("server.raw", &R::server, &S::raw),
      of<R>("server.prompt_total", &R::server, &S::prompt_total).min(0),
      of<R>("pair.id", &R::pair_id).min(0).only_if(has_pair),
      of<R>("pair.role", &R::pair_role).one_of(pair_role_names()).only_if(has_pair),
      of<R>("pair.edit_position", &R::edit_position).only_if(has_pair),
      of<R>("pair.edit", &R::edit).only_if(has_pair),
      of<R>("pair.first_diff", &R::edit_first_diff).min(0).only_if(has_pair),
      of<R>("pair.text_fraction", &R::edit_text_fraction).min(0).only_if(has_pair),
  };
}

}  // namespace

const std::vector<describe::Field<CallRecord>>& record_fields() {
  static const std::vector<describe::Field<CallRecord>> kFields = described();
  return kFields;
}

const std::vector<CallField>& call_fields() {
  static const std::vector<CallField> kColumns = [] {
    std::vector<CallField> out;
    for (const auto& f : record_fields()) {
      if (!f.column_name.empty()) {
        out.push_back({f, [&f](const CallRecord& r) { return f.get(r); }});
      }
    }
    return out;
  }();
  return kColumns;
}

std::string csv_text(const FieldValue& v) {
  if (const auto* i = std::get_if<std::int64_t>(&v)) {
    return std::to_string(*i);
  }
  if (const auto* d = std::get_if<double>(&v)) {
    return fmt::format("{:.3f}", *d);
  }
  if (const auto* s = std::get_if<std::string>(&v)) {
    return *s;
  }
  return {};
}

}  // namespace kvbench
