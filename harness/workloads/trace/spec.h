#pragma once
// The trace workload's settings (scenario "workload": {"trace": {...}}): a request trace replayed
// against the server, every request's prompt built from its block ids, and each request's reuse
// predicted three ways (an infinite cache, the server's policy, and what the server reported).

#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "harness/workloads/layers.h"
#include "harness/workloads/trace/select.h"
#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads {

// A trace replay. `file` (relative to the scenario file) in `format` is read when the scenario is
// parsed; `sample` picks whole prefix families over the trace, `window` then keeps a stretch of
// what is chosen (of the whole trace without a sample), `scale` scales it, and the requests that
// result are `requests`, replayed whole in every server block. Timing "schedule" sends each
// request at its (scaled) arrival time, at most `concurrency` in flight (a request due while all
// are busy waits, and its record says how late it went); "closed" sends the next request as soon
// as one of `concurrency` streams is free. The server picks each request's slot: `slots` is the
// managed server's -np.
struct TraceReplay {
  static constexpr std::string_view kName = "trace";
  std::string file;  // as the scenario gives it
  std::string path;  // where it was read: absolute
  trace::Format format = trace::Format::mooncake;
  std::optional<int> block_tokens;  // the block size the ids stand for, if not the format's
  trace::Window window;
  std::optional<trace::Sample> sample;
  trace::Scale scale;
  bool closed = false;  // timing "closed"; false: "schedule"
  int concurrency = 1;
  int slots = 1;
  // An attached block-cache server's pool, in blocks of server.cache_rule.step tokens (vLLM's,
  // SGLang's): the policy of a block LRU of this size predicts each request's reuse.
  std::optional<std::size_t> capacity_blocks;
  // The requests replayed (chosen and scaled), and the whole trace's as read, shared by copies.
  std::shared_ptr<const trace::Trace> requests;
  std::shared_ptr<const trace::Trace> whole;
  // A recorded run's scenario (it has whole_trace) whose file is not where the run read it: the
  // run reads as any other, but replaying it again needs the file. Why it could not be read.
  std::string unread;
  std::string whole_trace_json;  // what run.json recorded of the whole trace, kept as it was
  // Past one host (kvbench run --trace-shard K/N): this replay is shard `shard_index` of
  // `shard_count`, the prefix families numbered in order of first arrival going to shard
  // number mod count, each family whole. `all` is every request of the one-host replay, and
  // `indices` the place there of each request in `requests`.
  int shard_index = 0;
  int shard_count = 1;
  std::shared_ptr<const trace::Trace> all;
  std::vector<int> indices;
  // The request's place in the one-host replay.
  int index_of(std::size_t i) const { return indices.empty() ? static_cast<int>(i) : indices[i]; }
};

// Keeps the families of shard `index` of `count` (as above); InputError for a shard out of range.
// A workload that defines shard() can be split over hosts (--trace-shard K/N).
void shard(TraceReplay& t, int index, int count);

KVBENCH_WORKLOAD_LAYERS(TraceReplay)  // its part in each layer (layers.h)

}  // namespace kvbench::workloads
