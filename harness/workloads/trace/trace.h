#pragma once
// A request trace as kvbench reads it: each request's arrival time, its input and output lengths
// in tokens and the ids of its prompt's blocks (equal ids are the same block of tokens, so a
// shared run of leading ids is a shared prefix). Three file formats are read, each checked on
// load; a bad file throws InputError naming the file, the line (the request's place in the JSON
// document for WEKA), the field and what was expected.
//
//   mooncake  JSON Lines: timestamp (ms), input_length, output_length, hash_ids; 512-token
//             blocks, the last one possibly partial: ceil(input_length / 512) == len(hash_ids).
//   bailian   JSON Lines (Qwen-Bailian): chat_id, parent_chat_id (-1 = root), timestamp (s),
//             input_length, output_length, type, turn, hash_ids; 16-token blocks, the same check.
//   weka      One JSON document per conversation (kv-cache-tester, docs/TRACE_FORMAT.md):
//             block_size, requests[{t (s), type, in, out, hash_ids, think_time, ...}], where a
//             request of type "subagent" nests requests of its own. Only full blocks have ids:
//             floor(in / block_size) == len(hash_ids). Ids are per conversation and a subagent
//             starts from a fresh cache, so each conversation and each subagent gets ids of its
//             own here, unless the document says "hash_id_scope": "global".

#include <cstddef>
#include <cstdint>
#include <iosfwd>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace kvbench::workloads::trace {

enum class Format { mooncake, bailian, weka };

// "mooncake", "bailian" or "weka"; nullopt for any other name.
std::optional<Format> format_named(std::string_view name);
std::string_view format_name(Format f);

struct Request {
  double due_ms = 0;                  // arrival, in ms from the trace's start
  int input_tokens = 0;               // prompt length
  int output_tokens = 0;              // answer length
  std::vector<std::uint64_t> blocks;  // the prompt's block ids, first to last
  std::string origin;                 // where it was read: "line 12" or "requests[3].requests[1]"
  // Qwen-Bailian only: its session links (chat_id -1 elsewhere).
  std::int64_t chat_id = -1;
  std::int64_t parent_chat_id = -1;
  int turn = 0;
  std::string type;  // Bailian's and WEKA's request type ("text", "s", "n", ...)
};

struct Trace {
  Format format = Format::mooncake;
  int block_tokens = 512;
  // True where the last block may be partial and still has an id (Mooncake, Bailian:
  // blocks = ceil(input / block)); false where only full blocks have ids (WEKA: floor).
  bool partial_block_has_id = true;
  std::vector<Request> requests;  // in arrival order
};

// Reads a whole trace from `in`; `file` names it in error messages. `block_tokens`, where given,
// is the block size the ids stand for instead of the format's (Mooncake and Bailian traces cut
// at another size): the block count check and the tokens a block holds use it. A WEKA document
// states its own block_size, so giving one for it is an InputError.
Trace read_trace(std::istream& in, Format format, const std::string& file,
                 std::optional<int> block_tokens = std::nullopt);
// Reads the trace at `path`; an unreadable file is an InputError too.
Trace read_trace_file(const std::string& path, Format format,
                      std::optional<int> block_tokens = std::nullopt);

// The block count a request of `input_tokens` must have in `trace`'s format.
std::size_t expected_blocks(const Trace& trace, long long input_tokens);

}  // namespace kvbench::workloads::trace
