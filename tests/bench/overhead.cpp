// overhead_bench: how far kvbench's own timestamps are from the truth. It starts stream-stub (a
// server that streams on a script and logs the steady-clock time of every write), drives it with
// kvbench's client (MultiTransport + CompletionStream, the code a concurrent run uses) at each
// stream count, and, in the same run, with `curl -w` (one stream) and an aiohttp client
// (scripts/stream_client.py). Errors, per call, against the stub's log:
//   TTFT error  = client TTFT - (stub's first write - stub's request read); kvbench's TTFT runs
//                 from before the connect (as its records do); "after connect" runs from the
//                 request going out, which is what curl's time_starttransfer - time_pretransfer
//                 measures
//   ITL error   = client gap between token events - stub's gap between the writes
//   arrival lag = client arrival stamp - stub's write (same CLOCK_MONOTONIC; not for curl)
// Prints a Markdown table; --json FILE writes the figures; --check exits 1 unless no call was lost
// and the median TTFT error at one stream is under 5 ms (a loose bound for a shared CI machine).
//
//   overhead_bench --stub PATH [--streams 1,64,512] [--calls N] [--first-ms 20] [--token-ms 5]
//                  [--tokens 16] [--curl-calls 50] [--python PATH|none] [--json FILE] [--check]
//                  [--max-rate 0] [--no-warmup]
//   overhead_bench --stub PATH --soak SECONDS [--streams 1000] [--window-s 10] [--max-rate R]
// --soak keeps the first --streams count busy on one MultiTransport for SECONDS (each call ending
// starts the next), reads the stub's log as it grows, and prints per window the calls done, the
// calls lost, the TTFT error p50 / p99 and this process's resident memory (VmRSS), then the whole
// soak's figures; --check then exits 1 if a call was lost.
// --max-rate caps the tokens per second of all streams together (each stream's interval grows at
// high stream counts; 0: no cap). Unless --no-warmup, each stream's first call, which opens its
// connection, is not measured (curl opens one per call and measures after it).

#include <signal.h>
#include <spawn.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "harness/backend/completion_stream.h"
#include "harness/http/multi_transport.h"
#include "harness/stats/descriptive.h"

extern char** environ;

namespace {

namespace fs = std::filesystem;
using kvbench::Nanos;
using nlohmann::json;

struct Options {
  std::string stub;
  std::vector<int> streams{1, 64, 512};
  int calls = 0;  // per level; 0: max(200, 2 x streams)
  double first_ms = 20;
  double token_ms = 5;
  int tokens = 16;
  int curl_calls = 50;
  std::string python = "scripts/stream_client.py";
  std::string json_out;
  bool check = false;
  double max_rate = 0;  // tokens per second over all streams; 0: no cap
  bool warmup = true;
  double soak_s = 0;  // > 0: the soak mode
  double window_s = 10;
};

// A stream's token interval at `streams` streams: --token-ms, or longer when the streams together
// would send more than --max-rate tokens a second. The stub and the client share the machine, so
// without a cap the highest stream counts measure the machine's saturation, not the client.
double level_token_ms(const Options& o, int streams) {
  if (o.max_rate <= 0) {
    return o.token_ms;
  }
  return std::max(o.token_ms, 1000.0 * streams / o.max_rate);
}

// One call as a client saw it: send stamp and token arrival stamps (ns, CLOCK_MONOTONIC), or for
// curl only the TTFT it measured itself.
struct Seen {
  std::int64_t sent_ns = 0;
  std::vector<std::int64_t> arrivals_ns;
  double curl_ttft_ms = -1;
  std::int64_t connected_ns = 0;  // kvbench: the request about to go out (Result::request_out)
  long connects = 0;              // kvbench: connections this call opened
};

// What the stub logged for one request.
struct Truth {
  std::int64_t recv_ns = 0;
  std::vector<std::int64_t> send_ns;
};

// One line of the stub's log into `out`, by request id.
// A line still being written is left for the next read.
void add_truth(std::map<int, Truth>& out, const std::string& line) {
  const json j = json::parse(line, nullptr, false);
  if (j.is_discarded() || !j.contains("id") || !j.contains("send_ns")) {
    return;
  }
  out[j["id"].get<int>()] = {j["recv_ns"].get<std::int64_t>(),
                             j["send_ns"].get<std::vector<std::int64_t>>()};
}

// The stub process: started in the constructor, killed and reaped in the destructor.
class Stub {
 public:
  Stub(const Options& o, const fs::path& dir) : log_(dir / "stub.jsonl") {
    const fs::path port_file = dir / "port";
    std::vector<std::string> args = {o.stub,
                                     "--port-file",
                                     port_file.string(),
                                     "--log",
                                     log_.string(),
                                     "--first-ms",
                                     fmt::format("{}", o.first_ms),
                                     "--token-ms",
                                     fmt::format("{}", o.token_ms),
                                     "--tokens",
                                     std::to_string(o.tokens)};
    std::vector<char*> argv;
    for (auto& a : args) {
      argv.push_back(a.data());
    }
    argv.push_back(nullptr);
    if (posix_spawn(&pid_, o.stub.c_str(), nullptr, nullptr, argv.data(), environ) != 0) {
      throw std::runtime_error("cannot start " + o.stub);
    }
    for (int i = 0; i < 500 && !fs::exists(port_file); ++i) {
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    std::ifstream in(port_file);
    int port = 0;
    in >> port;
    if (port == 0) {
      throw std::runtime_error("stream-stub did not write its port");
    }
    url_ = fmt::format("http://127.0.0.1:{}/completion", port);
  }
  ~Stub() {
    ::kill(pid_, SIGTERM);
    int status = 0;
    ::waitpid(pid_, &status, 0);
  }
  Stub(const Stub&) = delete;
  Stub& operator=(const Stub&) = delete;
  const std::string& url() const { return url_; }

  // The lines the stub has added since the last call (complete lines only), by request id; the
  // log is left as it is, so the stub can go on writing (the soak).
  std::map<int, Truth> read_new() {
    std::map<int, Truth> out;
    std::ifstream in(log_, std::ios::binary);
    in.seekg(static_cast<std::streamoff>(read_to_));
    std::string line;
    while (std::getline(in, line)) {
      if (in.eof()) {
        break;  // no newline yet: the stub is still writing it
      }
      read_to_ += line.size() + 1;
      add_truth(out, line);
    }
    return out;
  }

  // The log by request id once it holds ids 0 to calls - 1 (the stub writes a request's line
  // after its last chunk, which the client may have read first), or after 5 s; the log is then
  // emptied for the next measurement.
  std::map<int, Truth> take_log(int calls) {
    std::map<int, Truth> out;
    const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
    while (true) {
      out.clear();
      std::ifstream in(log_);
      for (std::string line; std::getline(in, line);) {
        add_truth(out, line);
      }
      const auto logged = std::count_if(
          out.begin(), out.end(), [&](const auto& e) { return e.first >= 0 && e.first < calls; });
      if (logged >= calls || std::chrono::steady_clock::now() > deadline) {
        break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    std::ofstream(log_, std::ios::trunc);
    return out;
  }

 private:
  fs::path log_;
  std::uintmax_t read_to_ = 0;  // read_new(): bytes of the log already read
  pid_t pid_ = 0;
  std::string url_;
};

std::int64_t to_ns(Nanos t) {
  return t.count();
}

// The stub URL of call `id`, with the level's token interval.
std::string call_url(const std::string& url, int id, double token_ms) {
  return fmt::format("{}?id={}&token_ms={}", url, id, token_ms);
}

// Ids of warm-up calls: outside every level's measured range, so compare() never reads them.
constexpr int kWarmupIds = 1'000'000;

// kvbench's client: `streams` calls in flight on one thread until `calls` are done. With
// `warmup`, each stream first makes one call that is not measured, which opens the connections
// that the measured calls then reuse (libcurl keeps them in the multi handle).
std::map<int, Seen> run_kvbench(const std::string& url, int streams, int calls, double token_ms,
                                bool warmup) {
  kvbench::SteadyClock clock;
  kvbench::http::MultiTransport multi(clock);
  std::map<int, Seen> seen;
  int next = 0;
  const auto request = [&](int id) {
    kvbench::http::Request req;
    req.url = call_url(url, id, token_ms);
    req.body = R"({"prompt":"x","stream":true})";
    req.timeout = std::chrono::milliseconds(600000);
    return req;
  };
  if (warmup) {
    for (int i = 0; i < streams; ++i) {
      multi.start(
          request(kWarmupIds + i), [](std::string_view, Nanos) { return true; },
          [](const kvbench::http::Result&) {});
    }
    while (multi.poll(std::chrono::milliseconds(100)) > 0) {
    }
  }
  std::function<void()> launch = [&] {
    const int id = next++;
    auto stream = std::make_shared<kvbench::backend::CompletionStream>();
    multi.start(
        request(id), [stream](std::string_view c, Nanos at) { return stream->feed(c, at); },
        [&, id, stream](kvbench::http::Result res) {
          const auto call = stream->finish(res);
          Seen s;
          if (call.outcome == kvbench::Outcome::ok) {
            s.sent_ns = to_ns(call.trace.sent);
            s.connected_ns = to_ns(res.request_out);
            s.connects = res.connections_opened;
            for (const auto t : call.trace.token_arrivals) {
              s.arrivals_ns.push_back(to_ns(t));
            }
            seen[id] = s;
          }
          if (next < calls) {
            launch();
          }
        });
  };
  for (int i = 0; i < std::min(streams, calls); ++i) {
    launch();
  }
  while (multi.poll(std::chrono::milliseconds(100)) > 0) {
  }
  return seen;
}

std::string run_capture(const std::string& cmd) {
  std::string out;
  std::unique_ptr<FILE, int (*)(FILE*)> pipe(::popen(cmd.c_str(), "r"), ::pclose);
  char buf[4096];
  while (pipe && std::fgets(buf, sizeof buf, pipe.get()) != nullptr) {
    out += buf;
  }
  return out;
}

// curl, one call at a time: TTFT as curl measures it (first byte after the request went out).
std::map<int, Seen> run_curl(const std::string& url, int calls, double token_ms) {
  std::map<int, Seen> seen;
  for (int id = 0; id < calls; ++id) {
    const std::string out = run_capture(fmt::format(
        "curl -s -o /dev/null --noproxy '*' -X POST -H 'Content-Type: application/json' "
        "-d '{{\"prompt\":\"x\"}}' -w '%{{time_pretransfer}} %{{time_starttransfer}}' '{}'",
        call_url(url, id, token_ms)));
    double pre = 0;
    double start = 0;
    if (std::istringstream(out) >> pre >> start) {
      seen[id].curl_ttft_ms = (start - pre) * 1000.0;
    }
  }
  return seen;
}

std::map<int, Seen> run_python(const Options& o, const std::string& url, int streams, int calls,
                               double token_ms, const fs::path& dir) {
  std::map<int, Seen> seen;
  const fs::path out = dir / "python.jsonl";
  run_capture(fmt::format("/usr/bin/python3 {} '{}?token_ms={}' {} {} {} {} 2>&1", o.python, url,
                          token_ms, streams, calls, out.string(), o.warmup ? kWarmupIds : -1));
  std::ifstream in(out);
  for (std::string line; std::getline(in, line);) {
    const json j = json::parse(line);
    seen[j["id"].get<int>()] = {j["sent_ns"].get<std::int64_t>(),
                                j["arrivals_ns"].get<std::vector<std::int64_t>>(), -1, 0};
  }
  return seen;
}

json pct(std::vector<double> v) {
  if (v.empty()) {
    return nullptr;
  }
  std::sort(v.begin(), v.end());
  return {{"p50", kvbench::stats::percentile_sorted(v, 0.5)},
          {"p99", kvbench::stats::percentile_sorted(v, 0.99)},
          {"n", v.size()}};
}

double ms(std::int64_t ns) {
  return static_cast<double>(ns) / 1e6;
}

// Errors of one client at one stream count against the stub's log.
json compare(const std::string& client, int streams, int calls, const std::map<int, Seen>& seen,
             const std::map<int, Truth>& truth) {
  std::vector<double> ttft;
  std::vector<double> ttft_connected;  // from the request going out, as curl measures
  std::vector<double> itl;
  std::vector<double> lag;
  int lost = 0;
  long connects = 0;
  for (int id = 0; id < calls; ++id) {
    const auto s = seen.find(id);
    const auto t = truth.find(id);
    if (s == seen.end() || t == truth.end() || t->second.send_ns.empty()) {
      ++lost;
      continue;
    }
    const Truth& tr = t->second;
    connects += s->second.connects;
    const double true_ttft = ms(tr.send_ns[0] - tr.recv_ns);
    if (s->second.curl_ttft_ms >= 0) {
      ttft_connected.push_back(s->second.curl_ttft_ms - true_ttft);
      continue;
    }
    const auto& a = s->second.arrivals_ns;
    if (a.size() != tr.send_ns.size()) {
      ++lost;
      continue;
    }
    ttft.push_back(ms(a[0] - s->second.sent_ns) - true_ttft);
    if (s->second.connected_ns > 0) {
      ttft_connected.push_back(ms(a[0] - s->second.connected_ns) - true_ttft);
    }
    for (std::size_t k = 0; k < a.size(); ++k) {
      lag.push_back(ms(a[k] - tr.send_ns[k]));
      if (k > 0) {
        itl.push_back(ms(a[k] - a[k - 1]) - ms(tr.send_ns[k] - tr.send_ns[k - 1]));
      }
    }
  }
  return {{"client", client},
          {"streams", streams},
          {"calls", calls},
          {"lost", lost},
          {"connects", connects},
          {"ttft_error_ms", pct(ttft)},
          {"ttft_after_connect_error_ms", pct(ttft_connected)},
          {"itl_error_ms", pct(itl)},
          {"arrival_lag_ms", pct(lag)}};
}

// This process's resident memory, MiB (VmRSS).
double rss_mib() {
  std::ifstream in("/proc/self/status");
  for (std::string line; std::getline(in, line);) {
    if (line.rfind("VmRSS:", 0) == 0) {
      return std::stod(line.substr(6)) / 1024.0;
    }
  }
  return 0;
}

// The soak: `streams` calls always in flight on one MultiTransport for `seconds`; every window the
// calls both sides have finished are compared and dropped, so what this process holds stays what
// the transport holds (plus one double per call for the final percentiles).
json soak(Stub& stub, const Options& o, int streams) {
  const double token_ms = level_token_ms(o, streams);
  kvbench::SteadyClock clock;
  kvbench::http::MultiTransport multi(clock);
  std::map<int, Seen> seen;
  std::map<int, Truth> truth;
  std::vector<double> all_ttft;
  int next = 0;
  int failed = 0;
  int compared = 0;
  int mismatched = 0;
  bool stopping = false;
  std::function<void()> launch = [&] {
    const int id = next++;
    kvbench::http::Request req;
    req.url = call_url(stub.url(), id, token_ms);
    req.body = R"({"prompt":"x","stream":true})";
    req.timeout = std::chrono::milliseconds(120000);
    auto stream = std::make_shared<kvbench::backend::CompletionStream>();
    multi.start(
        req, [stream](std::string_view c, Nanos at) { return stream->feed(c, at); },
        [&, id, stream](kvbench::http::Result res) {
          const auto call = stream->finish(res);
          if (call.outcome == kvbench::Outcome::ok) {
            Seen s;
            s.sent_ns = to_ns(call.trace.sent);
            for (const auto t : call.trace.token_arrivals) {
              s.arrivals_ns.push_back(to_ns(t));
            }
            seen[id] = std::move(s);
          } else {
            ++failed;
          }
          if (!stopping) {
            launch();
          }
        });
  };
  // Matches what both sides have finished; returns the window's TTFT errors.
  const auto match = [&] {
    for (auto& [id, t] : stub.read_new()) {
      truth[id] = std::move(t);
    }
    std::vector<double> ttft;
    for (auto it = seen.begin(); it != seen.end();) {
      const auto t = truth.find(it->first);
      if (t == truth.end()) {
        ++it;
        continue;
      }
      const auto& a = it->second.arrivals_ns;
      if (a.size() == t->second.send_ns.size() && !a.empty()) {
        ttft.push_back(ms(a[0] - it->second.sent_ns) -
                       ms(t->second.send_ns[0] - t->second.recv_ns));
      } else {
        ++mismatched;
      }
      ++compared;
      truth.erase(t);
      it = seen.erase(it);
    }
    all_ttft.insert(all_ttft.end(), ttft.begin(), ttft.end());
    return ttft;
  };
  json windows = json::array();
  const auto t0 = std::chrono::steady_clock::now();
  const auto elapsed = [&] {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  };
  for (int i = 0; i < streams; ++i) {
    launch();
  }
  double window_end = o.window_s;
  while (elapsed() < o.soak_s) {
    multi.poll(std::chrono::milliseconds(50));
    if (elapsed() >= window_end) {
      const auto ttft = match();
      const json p = pct(ttft);
      windows.push_back({{"t_s", elapsed()},
                         {"calls_done", compared},
                         {"in_flight", multi.in_flight()},
                         {"failed", failed},
                         {"ttft_error_ms", p},
                         {"rss_mib", rss_mib()}});
      fmt::print(stderr,
                 "soak {:6.1f} s: {} calls compared, {} in flight, {} failed, TTFT error {}, "
                 "RSS {:.1f} MiB\n",
                 elapsed(), compared, multi.in_flight(), failed,
                 p.is_null() ? "-"
                             : fmt::format("{:.3f} / {:.3f} ms", p["p50"].get<double>(),
                                           p["p99"].get<double>()),
                 rss_mib());
      window_end += o.window_s;
    }
  }
  stopping = true;
  while (multi.poll(std::chrono::milliseconds(100)) > 0) {
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(200));  // the stub's last lines
  match();
  const int started = next;
  const int lost = started - compared + mismatched;
  return {{"streams", streams},
          {"token_ms", token_ms},
          {"seconds", o.soak_s},
          {"calls", started},
          {"lost", lost},
          {"failed", failed},
          {"ttft_error_ms", pct(all_ttft)},
          {"windows", windows}};
}

std::string cell(const json& p) {
  return p.is_null()
             ? "-"
             : fmt::format("{:.3f} / {:.3f}", p["p50"].get<double>(), p["p99"].get<double>());
}

std::vector<int> int_list(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string item; std::getline(in, item, ',');) {
    out.push_back(std::stoi(item));
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string k = argv[i];
    const auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        throw std::runtime_error(k + " needs a value");
      }
      return argv[++i];
    };
    if (k == "--stub") {
      o.stub = value();
    } else if (k == "--streams") {
      o.streams = int_list(value());
    } else if (k == "--calls") {
      o.calls = std::stoi(value());
    } else if (k == "--first-ms") {
      o.first_ms = std::stod(value());
    } else if (k == "--token-ms") {
      o.token_ms = std::stod(value());
    } else if (k == "--tokens") {
      o.tokens = std::stoi(value());
    } else if (k == "--curl-calls") {
      o.curl_calls = std::stoi(value());
    } else if (k == "--python") {
      o.python = value();
    } else if (k == "--json") {
      o.json_out = value();
    } else if (k == "--check") {
      o.check = true;
    } else if (k == "--max-rate") {
      o.max_rate = std::stod(value());
    } else if (k == "--no-warmup") {
      o.warmup = false;
    } else if (k == "--soak") {
      o.soak_s = std::stod(value());
    } else if (k == "--window-s") {
      o.window_s = std::stod(value());
    } else {
      throw std::runtime_error("unknown option " + k);
    }
  }
  if (o.stub.empty()) {
    throw std::runtime_error("--stub PATH is required");
  }
  return o;
}

bool passes(const json& rows) {
  bool ok = true;
  for (const auto& r : rows) {
    if (r["client"] != "kvbench") {
      continue;
    }
    ok = ok && r["lost"].get<int>() == 0;
    if (r["streams"] == 1) {
      ok = ok && !r["ttft_error_ms"].is_null() && r["ttft_error_ms"]["p50"].get<double>() < 5.0;
    }
  }
  return ok;
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  const fs::path dir = fs::temp_directory_path() / fmt::format("kvbench-overhead-{}", ::getpid());
  fs::create_directories(dir);
  // A thousand streams need a thousand sockets here and in the stub (started from here).
  rlimit files{};
  if (::getrlimit(RLIMIT_NOFILE, &files) == 0 && files.rlim_cur < files.rlim_max) {
    files.rlim_cur = files.rlim_max;
    ::setrlimit(RLIMIT_NOFILE, &files);
  }
  if (o.soak_s > 0) {
    json result;
    {
      Stub stub(o, dir);
      result = soak(stub, o, o.streams.front());
    }
    fs::remove_all(dir);
    const auto& w = result["windows"];
    fmt::print(
        "soak: {} streams for {:g} s, a token every {:g} ms per stream; {} calls, {} lost, "
        "{} failed; TTFT error p50 / p99 {}; RSS {} MiB after the first window, {} MiB "
        "at the end, {} MiB at most\n",
        result["streams"].get<int>(), o.soak_s, result["token_ms"].get<double>(),
        result["calls"].get<int>(), result["lost"].get<int>(), result["failed"].get<int>(),
        cell(result["ttft_error_ms"]),
        w.empty() ? "-" : fmt::format("{:.1f}", w.front()["rss_mib"].get<double>()),
        w.empty() ? "-" : fmt::format("{:.1f}", w.back()["rss_mib"].get<double>()),
        w.empty() ? "-"
                  : fmt::format("{:.1f}", std::max_element(w.begin(), w.end(),
                                                           [](const json& a, const json& b) {
                                                             return a["rss_mib"] < b["rss_mib"];
                                                           })
                                              ->at("rss_mib")
                                              .get<double>()));
    if (!o.json_out.empty()) {
      std::ofstream(o.json_out) << result.dump(2) << '\n';
    }
    return o.check && result["lost"].get<int>() != 0 ? 1 : 0;
  }
  json rows = json::array();
  {
    Stub stub(o, dir);
    for (const int n : o.streams) {
      const int calls = o.calls > 0 ? o.calls : std::max(200, 2 * n);
      const double token_ms = level_token_ms(o, n);
      auto seen = run_kvbench(stub.url(), n, calls, token_ms, o.warmup);
      rows.push_back(compare("kvbench", n, calls, seen, stub.take_log(calls)));
      rows.back()["token_ms"] = token_ms;
      if (o.python != "none") {
        seen = run_python(o, stub.url(), n, calls, token_ms, dir);
        rows.push_back(compare("python-aiohttp", n, calls, seen, stub.take_log(calls)));
        rows.back()["token_ms"] = token_ms;
      }
    }
    if (o.curl_calls > 0) {
      const auto seen = run_curl(stub.url(), o.curl_calls, o.token_ms);  // before the log is read
      rows.push_back(compare("curl", 1, o.curl_calls, seen, stub.take_log(o.curl_calls)));
      rows.back()["token_ms"] = o.token_ms;
    }
  }
  fs::remove_all(dir);
  const std::string cap =
      o.max_rate > 0
          ? fmt::format(" (at most {:g} tokens/s over all streams: slower streams above that)",
                        o.max_rate)
          : std::string();
  fmt::print(
      "stub: first token after {} ms, then a token every {} ms per stream{}, {} tokens; {}\n\n",
      o.first_ms, o.token_ms, cap, o.tokens,
      o.warmup ? "each stream's first call (opening its connection) is not measured"
               : "every call measured, connects included");
  fmt::print(
      "| client | streams | token every ms | calls | lost | TTFT error ms p50 / p99 | "
      "TTFT error after connect ms p50 / p99 | inter-token error ms p50 / p99 | "
      "arrival lag ms p50 / p99 |\n");
  fmt::print("| --- | --- | --- | --- | --- | --- | --- | --- | --- |\n");
  for (const auto& r : rows) {
    fmt::print("| {} | {} | {:g} | {} | {} | {} | {} | {} | {} |\n", r["client"].get<std::string>(),
               r["streams"].get<int>(), r["token_ms"].get<double>(), r["calls"].get<int>(),
               r["lost"].get<int>(), cell(r["ttft_error_ms"]),
               cell(r["ttft_after_connect_error_ms"]), cell(r["itl_error_ms"]),
               cell(r["arrival_lag_ms"]));
  }
  if (!o.json_out.empty()) {
    std::ofstream(o.json_out) << rows.dump(2) << '\n';
  }
  return o.check && !passes(rows) ? 1 : 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "overhead_bench: %s\n", e.what());
  return 2;
}
