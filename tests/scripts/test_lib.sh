# shellcheck shell=bash
# What the shell tests share: a line per check with a pass and fail count, a free port, and a
# private PostgreSQL server (Debian's, trust authentication, on a private port and folder).
# Source it after setting test_name (the prefix of every line).

passed=0
failed=0
ok() {
  echo "$test_name: ok: $*"
  passed=$((passed + 1))
}
fail() {
  echo "$test_name: FAIL: $*" >&2
  failed=$((failed + 1))
}
# check DESCRIPTION COMMAND...: ok when the command succeeds.
check() {
  local what=$1
  shift
  if "$@"; then ok "$what"; else fail "$what"; fi
}

pg_stop=()
free_port() {
  python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0))
print(s.getsockname()[1])'
}

# The newest PostgreSQL server's bin folder Debian's postgresql installed, or nothing.
postgres_bin() {
  find /usr/lib/postgresql -mindepth 2 -maxdepth 2 -name bin 2>/dev/null | sort -V | tail -n 1
}

# start_postgres DIR: a brand-new server in DIR with a database kvbench of the user kvbench; run
# as the postgres user (or nobody) when this is root. Sets pg_url and pg_stop (the command that
# stops it); returns non-zero with the logs in DIR (initdb.log, log) when it could not start.
start_postgres() {
  local dir=$1 bin port
  bin=$(postgres_bin)
  [[ -n $bin && -x $bin/initdb ]] || return 1
  mkdir -p "$dir/data"
  local as_pg=()
  if ((EUID == 0)); then
    local user=postgres
    id -u postgres >/dev/null 2>&1 || user=nobody
    chmod 755 "$(dirname "$dir")"
    chown -R "$user" "$dir"
    as_pg=(runuser -u "$user" --)
  fi
  port=$(free_port)
  (cd "$dir" && "${as_pg[@]}" "$bin/initdb" -D "$dir/data" -U kvbench --auth=trust -E UTF8 \
    --no-sync >"$dir/initdb.log" 2>&1 &&
    "${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w \
      -o "-p $port -k $dir -c listen_addresses=127.0.0.1" start >/dev/null 2>&1) || return 1
  pg_stop=("${as_pg[@]}" "$bin/pg_ctl" -D "$dir/data" -m fast -w stop)
  (cd "$dir" && "${as_pg[@]}" "$bin/createdb" -h 127.0.0.1 -p "$port" -U kvbench kvbench) ||
    return 1
  pg_url=postgresql://kvbench@127.0.0.1:$port/kvbench
}
