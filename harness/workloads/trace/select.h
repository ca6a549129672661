#pragma once
// Choosing and scaling the requests of a trace that a replay sends: a window of consecutive
// requests, a seeded sample of whole prefix families, and the token and time scales. Each returns
// a new trace and leaves its input as it was; bad settings throw InputError.

#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>

#include "harness/workloads/trace/trace.h"

namespace kvbench::workloads::trace {

// A prefix family is the requests that share their first two blocks. The family key of a request:
// its first two block ids; nullopt for a request of fewer than two blocks, which belongs to no
// family.
std::optional<std::pair<std::uint64_t, std::uint64_t>> family_key(const Request& r);

// Requests first .. first + count - 1 (0-based, in arrival order); no count: to the end.
struct Window {
  std::size_t first = 0;
  std::optional<std::size_t> count;
};

// `families` prefix families of at least two requests, picked with `seed`.
struct Sample {
  std::size_t families = 0;
  std::uint64_t seed = 1;
};

// `tokens` multiplies the block size and the lengths; `time` divides the gaps between arrivals.
struct Scale {
  double tokens = 1;
  double time = 1;
};

// The window's requests. A window that starts or ends past the trace's last request is an
// InputError naming the trace's length.
Trace take_window(const Trace& trace, const Window& window);

// All requests of `sample.families` prefix families (the requests that share their first two
// blocks), drawn uniformly without replacement among the families of at least two requests with
// kvbench::Rng(seed), the same on every platform; the requests stay in trace order. Asking for
// more families than the trace has is an InputError naming how many it has.
Trace sample_families(const Trace& trace, const Sample& sample);

// The trace at `scale`: block = max(1, round(block x tokens)); a request of n block ids keeps
// them, its input becomes its whole blocks at the scaled block size plus its last block's tokens
// scaled (see scaled_input); output = max(1, round(output x tokens)); arrivals count from the
// first request's, with every gap divided by `time`. Scales must be > 0. Rounding is half away
// from zero.
Trace scale_trace(const Trace& trace, const Scale& scale);

// A request's input at a token scale. With the last block partial and hashed (Mooncake, Bailian),
// a request of n ids has n - 1 whole blocks and a last block of input - (n - 1) x block tokens
// (1 to block); it becomes (n - 1) x scaled block + max(1, round(last x tokens)), never more than
// the scaled block, so ceil(input / block) == n still holds. With full blocks only (WEKA), the n
// whole blocks are followed by a tail of input - n x block tokens (0 to block - 1) that has no
// id; it becomes n x scaled block + min(scaled block - 1, round(tail x tokens)), so
// floor(input / block) == n still holds.
int scaled_input(const Trace& trace, const Request& r, int scaled_block, double tokens);

}  // namespace kvbench::workloads::trace
