#include "simulated_run.h"

#include <cmath>

#include <boost/random/normal_distribution.hpp>

#include "harness/core/random.h"

namespace kvbench::gate::sim {

namespace {

std::vector<std::string> set_order(const std::vector<std::string>& variants) {
  std::vector<std::string> order = variants;
  order.insert(order.end(), variants.rbegin(), variants.rend());
  return order;
}

double ratio(const std::map<std::string, double>& ratios, const std::string& v) {
  const auto it = ratios.find(v);
  return it == ratios.end() ? 1.0 : it->second;
}

CallRecord make_call(const RunShape& shape, const std::string& variant, int block, int seq,
                     double t_s, int prompt, double noise_decode, double noise_ttft) {
  CallRecord r;
  r.run_id = "sim";
  r.seq = seq;
  r.block = block;
  r.kind = kvbench::CallKind::timed;
  r.prompt_tokens = prompt;
  r.num_ctx = shape.num_ctx;
  r.cache_type = shape.cache_type;
  r.variant = variant;
  r.t_start_s = t_s;
  const double drift = shape.drift * (1.0 - std::exp(-t_s / 60.0 / shape.drift_tau_min));
  const double pk = prompt / 1000.0;
  r.client.decode_tps = 50.0 * std::exp(-0.027 * pk) * (1.0 - drift) *
                        ratio(shape.decode_ratio, variant) * std::exp(noise_decode);
  r.client.ttft_ms = 80.0 * std::exp(0.35 * pk) * (1.0 + drift) * ratio(shape.ttft_ratio, variant) *
                     std::exp(noise_ttft);
  return r;
}

void append_set(std::vector<CallRecord>& calls, const RunShape& shape, Rng& rng) {
  boost::random::normal_distribution<double> z(0.0, 1.0);
  double t_s = calls.empty() ? 0.0 : calls.back().t_start_s + shape.restart_gap_s;
  int block = calls.empty() ? 0 : calls.back().block + 1;
  // Drawn only when asked for, so runs without it keep their draws.
  const double set_decode = shape.set_cv > 0.0 ? shape.set_cv * z(rng) : 0.0;
  const double set_ttft = shape.set_cv > 0.0 ? shape.set_cv * z(rng) : 0.0;
  for (const auto& variant : set_order(shape.variants)) {
    const double block_decode = set_decode + shape.block_cv * z(rng);
    const double block_ttft = set_ttft + shape.block_cv * z(rng);
    CallRecord warm = make_call(shape, variant, block, static_cast<int>(calls.size()), t_s,
                                shape.prompt_tokens.front(), 0.0, 0.0);
    warm.kind = kvbench::CallKind::warmup;
    calls.push_back(warm);
    t_s += shape.call_spacing_s;
    for (int round = 0; round < shape.repeats; ++round) {
      std::vector<int> order = shape.prompt_tokens;
      kvbench::shuffle(order.begin(), order.end(), rng);
      for (int p : order) {
        const double nd = block_decode + shape.decode_cv * z(rng);
        const double nt = block_ttft + shape.ttft_cv * z(rng);
        auto r = make_call(shape, variant, block, static_cast<int>(calls.size()), t_s, p, nd, nt);
        r.round = round;
        calls.push_back(std::move(r));
        t_s += shape.call_spacing_s;
      }
    }
    t_s += shape.restart_gap_s;
    ++block;
  }
}

}  // namespace

std::vector<CallRecord> simulate_run(const RunShape& shape, std::uint64_t seed) {
  Rng rng(seed);
  std::vector<CallRecord> calls;
  for (int s = 0; s < shape.sets; ++s) {
    append_set(calls, shape, rng);
  }
  return calls;
}

void extend_simulated_run(std::vector<CallRecord>& calls, const RunShape& shape,
                          std::uint64_t seed) {
  Rng rng(seed);
  append_set(calls, shape, rng);
}

}  // namespace kvbench::gate::sim
