#pragma once
// The libcurl Transport. This header and its .cpp are the only places kvbench touches libcurl.

#include <memory>

#include "harness/core/clock.h"
#include "harness/http/transport.h"

namespace kvbench::http {

// One libcurl easy handle, reused from call to call so that a keep-alive connection to the server
// stays open between calls. Not thread-safe: give each thread its own CurlTransport. Proxies are
// never used (proxy environment variables are ignored), Nagle is off, "Expect: 100-continue" is
// never sent, and redirects are not followed (a 3xx status is an http_error).
class CurlTransport final : public Transport {
 public:
  // Every timestamp in a Result comes from `clock`, which must outlive this transport. Throws
  // kvbench::Error if libcurl cannot be initialised.
  explicit CurlTransport(const Clock& clock);
  ~CurlTransport() override;
  CurlTransport(const CurlTransport&) = delete;
  CurlTransport& operator=(const CurlTransport&) = delete;

  // See Transport. Rethrows an exception thrown by `sink` after the connection is released.
  Result stream(const Request& req, const ChunkSink& sink) override;
  Result fetch(const Request& req) override;

 private:
  class Easy;  // the libcurl handle, kept out of this header
  Result perform(const Request& req, const ChunkSink* sink);

  const Clock& clock_;
  std::unique_ptr<Easy> easy_;
};

}  // namespace kvbench::http
