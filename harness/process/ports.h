#pragma once
// Choosing a TCP port for a server kvbench starts on 127.0.0.1.

namespace kvbench::process {

// A TCP port on 127.0.0.1 that was free a moment ago: binds 127.0.0.1:0, reads the port the
// kernel chose, closes the socket. Throws kvbench::Error if no socket can be bound.
//
// The port is only free when this returns: another process may take it before the server binds
// it. Callers treat a server that fails to bind (it exits early, or never becomes healthy) as
// possibly this race and retry with a fresh port a few times before giving up.
int find_free_loopback_port();

}  // namespace kvbench::process
