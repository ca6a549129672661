#include "harness/cli/entry.h"

#include <exception>

#include <CLI/CLI.hpp>
#include <fmt/format.h>

#include "harness/cli/app.h"
#include "harness/core/error.h"
#include "harness/http/transport.h"
#include "harness/process/fd.h"
#include "harness/process/signals.h"

namespace kvbench::cli {

int run_main(int argc, char** argv) {
  // Named here, so --help shows "kvbench", not the path it was started by.
  CLI::App app{"", "kvbench"};
  // A call in flight ends as soon as Ctrl-C (or SIGTERM, SIGHUP) has arrived.
  http::set_interrupt_check(&process::stop_requested);
  process::raise_open_file_limit();  // a socket per concurrent stream
  int exit_code = 0;
  setup_app(app, exit_code);
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int code = app.exit(e);
    return code == 0 ? 0 : 2;
  } catch (const Error& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return e.exit_code();
  } catch (const std::exception& e) {
    fmt::print(stderr, "error: {}\n", e.what());
    return 1;
  }
  return exit_code;
}

}  // namespace kvbench::cli
