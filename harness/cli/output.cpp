#include "harness/cli/output.h"

#include <algorithm>
#include <filesystem>
#include <iostream>
#include <sstream>

#include <fmt/format.h>

#include "harness/core/atomic_file.h"
#include "harness/core/error.h"

namespace kvbench::cli {

namespace {

bool has(const std::vector<std::string>& formats, const std::string& f) {
  return std::find(formats.begin(), formats.end(), f) != formats.end();
}

// The format a file's extension names; empty when it names none.
std::string format_of(const std::string& path) {
  const std::string ext = std::filesystem::path(path).extension().string();
  for (const char* f : {"md", "csv", "tsv", "json", "jsonl", "html"}) {
    if (ext == std::string(".") + f) {
      return f;
    }
  }
  return ext == ".markdown" ? "md" : "";
}

}  // namespace

void add_output_options(CLI::App* cmd, OutputOptions& o, const std::vector<std::string>& formats) {
  cmd->add_option(
         "--format", o.format,
         fmt::format("What is printed: {} (default {})", fmt::join(formats, ", "), formats.front()))
      ->type_name("FORMAT")
      ->check(CLI::IsMember(formats))
      ->group("Output");
  cmd->add_option("-o,--output", o.files,
                  "Write to FILE instead of stdout (repeatable; - is stdout); its format is "
                  "--format, else its extension's (.md, .csv, .tsv, .json, .jsonl, .html)")
      ->type_name("FILE")
      ->group("Output");
}

void add_output_alias(CLI::App* cmd, OutputOptions& o, const std::string& flag,
                      const std::string& format, const std::string& what) {
  cmd->add_option_function<std::string>(
         flag,
         [&o, flag, format](const std::string& path) {
           fmt::print(stderr, "note: {} is kept for one release: use -o {} --format {}\n", flag,
                      path, format);
           o.aliases.push_back({flag, path, format});
         },
         fmt::format("{} (- for stdout); kept for one release: -o FILE --format {}", what, format))
      ->type_name("FILE")
      ->group("Output");
}

void add_format_alias(CLI::App* cmd, OutputOptions& o, const std::string& flag,
                      const std::string& format, const std::string& what) {
  cmd->add_flag_callback(
         flag,
         [&o, flag, format] {
           fmt::print(stderr, "note: {} is kept for one release: use --format {}\n", flag, format);
           if (o.format.empty()) {
             o.format = format;
           }
         },
         fmt::format("{}; kept for one release: --format {}", what, format))
      ->group("Output");
}

std::vector<OutputTarget> resolve_outputs(const OutputOptions& o,
                                          const std::vector<std::string>& formats,
                                          std::string_view command) {
  const auto check = [&](const std::string& format, const std::string& flag) {
    if (!has(formats, format)) {
      throw InputError(
          fmt::format("kvbench {}: {}: '{}' is not a format this command writes: "
                      "expected one of {}",
                      command, flag, format, fmt::join(formats, ", ")));
    }
  };
  if (!o.format.empty()) {
    check(o.format, "--format");
  }
  std::vector<OutputTarget> out;
  for (const auto& f : o.files) {
    std::string format = o.format;
    if (format.empty()) {
      format = f == "-" ? formats.front() : format_of(f);
    }
    if (format.empty()) {
      throw InputError(fmt::format(
          "kvbench {}: -o {}: its extension names no format: give --format ({}) or a file "
          "ending in .md, .csv, .tsv, .json, .jsonl or .html",
          command, f, fmt::join(formats, ", ")));
    }
    check(format, "-o " + f);
    out.push_back({f, format});
  }
  bool alias_to_stdout = false;
  for (const auto& a : o.aliases) {
    check(a.format, a.flag + " " + a.path);
    out.push_back({a.path, a.format});
    alias_to_stdout = alias_to_stdout || a.path == "-";
  }
  if (o.files.empty() && !alias_to_stdout) {
    out.insert(out.begin(), {"-", o.format.empty() ? formats.front() : o.format});
  }
  if (std::count_if(out.begin(), out.end(), [](const auto& t) { return t.path == "-"; }) > 1) {
    throw InputError(fmt::format("kvbench {}: stdout (-) can carry one output only", command));
  }
  return out;
}

void write_outputs(const std::vector<OutputTarget>& targets,
                   const std::function<void(std::ostream&, const std::string&)>& render) {
  for (const auto& t : targets) {
    if (t.path == "-") {
      render(std::cout, t.format);
      std::cout.flush();
      continue;
    }
    std::ostringstream text;
    render(text, t.format);
    try {
      AtomicFileWriter file(t.path);
      file.write(text.str());
      file.commit();
    } catch (const Error& e) {
      throw InputError(fmt::format("-o {}: cannot be written: {}", t.path, e.what()));
    }
  }
}

}  // namespace kvbench::cli
