#include "harness/cli/completion.h"

#include <iostream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <vector>

#include <fmt/format.h>

#include "harness/cli/data_files.h"
#include "harness/core/error.h"

namespace kvbench::cli {

namespace {

// Subcommands shown in --help (a hidden one has an empty group).
std::vector<CLI::App*> visible_subcommands(CLI::App& app) {
  return app.get_subcommands([](CLI::App* sub) { return !sub->get_group().empty(); });
}

// What an option's value is, for completion: a file, a folder, or something to type.
std::string value_kind(const CLI::Option& opt) {
  const std::string type = opt.get_type_name();
  if (type == "FILE") {
    return "file";
  }
  if (type.find("DIR") != std::string::npos) {
    return "dir";
  }
  return "value";
}

// The option's spellings: -x and --long.
std::vector<std::string> spellings(const CLI::Option& opt) {
  std::vector<std::string> out;
  for (const auto& s : opt.get_snames()) {
    out.push_back("-" + s);
  }
  for (const auto& l : opt.get_lnames()) {
    out.push_back("--" + l);
  }
  return out;
}

struct Tables {
  // Keyed by the command path ("kvbench", "kvbench run"): bash keys may not be empty.
  std::map<std::string, std::vector<std::string>> subs;   // command path -> subcommands
  std::map<std::string, std::vector<std::string>> opts;   // command path -> options
  std::map<std::string, std::string> kinds;               // "path --opt" -> file, dir or value
  std::map<std::string, std::vector<std::string>> names;  // path -> bundled scenario names
};

void walk(CLI::App& app, const std::string& path, const std::vector<std::string>& scenarios,
          Tables& t) {
  auto& opts = t.opts[path];
  bool takes_scenario = false;
  for (const CLI::Option* opt : app.get_options()) {
    if (opt->get_lnames().empty() && opt->get_snames().empty()) {
      takes_scenario = takes_scenario || opt->get_name() == "scenario";
      continue;  // a positional
    }
    for (const auto& s : spellings(*opt)) {
      opts.push_back(s);
      if (opt->get_expected_min() > 0) {
        t.kinds[path + " " + s] = value_kind(*opt);
      }
    }
  }
  if (takes_scenario) {
    t.names[path] = scenarios;
  }
  for (CLI::App* sub : visible_subcommands(app)) {
    t.subs[path].push_back(sub->get_name());
    walk(*sub, path + " " + sub->get_name(), scenarios, t);
  }
}

std::string quoted_words(const std::vector<std::string>& words) {
  return fmt::format("\"{}\"", fmt::join(words, " "));
}

// A bash associative array's body: ["key"]="words" pairs.
template <typename Map, typename Value>
std::string array_body(const Map& m, Value value) {
  std::string out;
  for (const auto& [key, v] : m) {
    out += fmt::format("    [\"{}\"]={}\n", key, value(v));
  }
  return out;
}

void write_bash(std::ostream& out, CLI::App& root) {
  Tables t;
  walk(root, "kvbench", bundled_scenarios(), t);
  out << "# bash completion for kvbench, generated from its command-line definition by\n"
         "# `kvbench completion bash`.\n"
         "_kvbench() {\n"
         "  local cur=${COMP_WORDS[COMP_CWORD]} prev=${COMP_WORDS[COMP_CWORD-1]}\n"
         "  local -A subs=(\n"
      << array_body(t.subs, quoted_words)
      << "  )\n"
         "  local -A opts=(\n"
      << array_body(t.opts, quoted_words)
      << "  )\n"
         "  local -A kinds=(\n"
      << array_body(t.kinds, [](const std::string& k) { return k; })
      << "  )\n"
         "  local -A names=(\n"
      << array_body(t.names, quoted_words)
      << "  )\n"
         "  local path=kvbench i w\n"
         "  for ((i = 1; i < COMP_CWORD; i++)); do\n"
         "    w=${COMP_WORDS[i]}\n"
         "    if [[ \" ${subs[$path]-} \" == *\" $w \"* ]]; then path=\"$path $w\"; fi\n"
         "  done\n"
         "  case \"${kinds[$path $prev]-}\" in\n"
         "    file) mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"); return ;;\n"
         "    dir) mapfile -t COMPREPLY < <(compgen -d -- \"$cur\"); return ;;\n"
         "    value) COMPREPLY=(); return ;;\n"
         "  esac\n"
         "  if [[ $cur == -* ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"${opts[$path]-}\" -- \"$cur\")\n"
         "  elif [[ -n ${subs[$path]-} ]]; then\n"
         "    mapfile -t COMPREPLY < <(compgen -W \"${subs[$path]}\" -- \"$cur\")\n"
         "  else\n"
         "    mapfile -t COMPREPLY < <(compgen -f -- \"$cur\"; "
         "compgen -W \"${names[$path]-}\" -- \"$cur\")\n"
         "  fi\n"
         "}\n"
         "complete -o filenames -F _kvbench kvbench\n";
}

// Text shown as it is in a man page: no line may start a roff request, and backslashes stay.
std::string roff_verbatim(const std::string& text) {
  std::istringstream in(text);
  std::string out;
  for (std::string line; std::getline(in, line);) {
    std::string escaped;
    for (const char c : line) {
      escaped += c == '\\' ? std::string("\\e") : std::string(1, c);
    }
    if (!escaped.empty() && (escaped[0] == '.' || escaped[0] == '\'')) {
      escaped = "\\&" + escaped;
    }
    out += escaped + "\n";
  }
  return out;
}

void write_commands(std::ostream& out, CLI::App& app, const std::string& path) {
  for (CLI::App* sub : visible_subcommands(app)) {
    const std::string name = path.empty() ? sub->get_name() : path + " " + sub->get_name();
    sub->footer("");  // the top-level footer (examples, exit codes) is in the page once
    out << ".SS \"kvbench " << name << "\"\n.nf\n" << roff_verbatim(sub->help()) << ".fi\n";
    write_commands(out, *sub, name);
  }
}

}  // namespace

void setup_completion_command(CLI::App& app) {
  auto shell = std::make_shared<std::string>();
  auto* cmd = app.add_subcommand(
      "completion",
      "Print a bash completion script (bash), or every subcommand's help for the man page (man)");
  cmd->group("");  // hidden: the build uses it
  cmd->add_option("what", *shell, "bash or man")->required()->check(CLI::IsMember({"bash", "man"}));
  cmd->callback([shell, &app] {
    if (*shell == "bash") {
      write_bash(std::cout, app);
    } else {
      std::cout << "[COMMANDS]\n";
      write_commands(std::cout, app, "");
    }
  });
}

}  // namespace kvbench::cli
