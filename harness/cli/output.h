#pragma once
// The one output scheme of every command that prints results: `--format FORMAT` (md, csv, tsv,
// json or jsonl, as far as the command has them) and `-o, --output FILE` (repeatable; `-` is
// stdout). Without -o, stdout carries the one format (md by default). Each -o FILE gets --format
// or, without it, the format its extension names (.md, .csv, .tsv, .json, .jsonl, .html). A format
// the command does not have, a file whose format cannot be told, or stdout twice is refused (exit
// 2) before anything is done. Files are written whole (a temporary file, then a rename).

#include <functional>
#include <ostream>
#include <string>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

namespace kvbench::cli {

struct OutputOptions {
  std::string format;              // --format; empty: not given
  std::vector<std::string> files;  // -o, in order
  // What older flags asked for (--json FILE and the like), each (path, format); unlike -o they
  // leave stdout's default output where it was.
  struct Alias {
    std::string flag, path, format;
  };
  std::vector<Alias> aliases;
};

// One output: where ("-" for stdout) and in which format.
struct OutputTarget {
  std::string path;
  std::string format;
};

// Adds --format (one of `formats`, the first the default) and -o/--output to `cmd`, in an
// "Output" group.
void add_output_options(CLI::App* cmd, OutputOptions& o, const std::vector<std::string>& formats);

// Adds an older flag that takes a file and means `-o FILE --format format`; using it notes on
// stderr what replaces it. `-` is stdout.
void add_output_alias(CLI::App* cmd, OutputOptions& o, const std::string& flag,
                      const std::string& format, const std::string& what);
// Adds an older flag that means `--format format` (stdout).
void add_format_alias(CLI::App* cmd, OutputOptions& o, const std::string& flag,
                      const std::string& format, const std::string& what);

// The outputs asked for. Throws InputError (exit 2) naming the flag for a format `formats` does
// not hold, a file whose format cannot be told, or stdout more than once.
std::vector<OutputTarget> resolve_outputs(const OutputOptions& o,
                                          const std::vector<std::string>& formats,
                                          std::string_view command);

// Writes each target: `render` is called once per target with its stream and format.
void write_outputs(const std::vector<OutputTarget>& targets,
                   const std::function<void(std::ostream&, const std::string&)>& render);

}  // namespace kvbench::cli
