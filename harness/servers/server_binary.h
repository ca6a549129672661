#pragma once
// Finding a server executable, the same way for every kind that kvbench starts: the path given,
// else the kind's environment variable, else the kind's own places, else its name on PATH.

#include <filesystem>
#include <string>
#include <vector>

namespace kvbench::servers {

struct ServerBinary {
  std::string name;                           // "llama-server": the executable's name on PATH
  std::string env;                            // "KVBENCH_LLAMA_SERVER"
  std::string field;                          // the input that names it, for a bad path
  std::vector<std::filesystem::path> places;  // tried after the variable, before PATH
  std::string places_text;                    // what `places` are, for the message
  std::string hint;                           // how to get one
};

// The executable's path: `explicit_path` (a path, or a name on PATH) when given, else the
// variable's value when it is set, else the first executable of `places`, else `name` on PATH.
// Throws InputError for an explicit path or a set variable that is not executable, and when
// nothing is found, naming what was tried and the hint.
std::string find_server_binary(const ServerBinary& b, const std::string& explicit_path);

}  // namespace kvbench::servers
