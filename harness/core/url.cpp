#include "harness/core/url.h"

#include <algorithm>
#include <utility>

namespace kvbench {

namespace {

// The authority's bounds in `url`: [begin, end); begin is npos when there is no "://".
std::pair<std::size_t, std::size_t> authority_of(std::string_view url) {
  const std::size_t scheme = url.find("://");
  if (scheme == std::string_view::npos) {
    return {std::string_view::npos, std::string_view::npos};
  }
  const std::size_t begin = scheme + 3;
  std::size_t end = url.find_first_of("/?#", begin);
  if (end == std::string_view::npos) {
    end = url.size();
  }
  return {begin, end};
}

}  // namespace

bool url_has_credentials(std::string_view url) {
  const auto [begin, end] = authority_of(url);
  if (begin == std::string_view::npos) {
    // No scheme: anything before an '@' that precedes the first '/' reads as a user part.
    const std::size_t at = url.find('@');
    return at != std::string_view::npos && at < url.find_first_of("/?#");
  }
  return url.substr(begin, end - begin).find('@') != std::string_view::npos;
}

std::string url_for_display(std::string_view url) {
  auto [begin, end] = authority_of(url);
  std::string out;
  if (begin == std::string_view::npos) {
    begin = 0;
    end = std::min(url.find_first_of("/?#"), url.size());
  }
  out.append(url.substr(0, begin));
  const std::string_view authority = url.substr(begin, end - begin);
  const std::size_t at = authority.rfind('@');
  if (at != std::string_view::npos) {
    out += "***@";
    out.append(authority.substr(at + 1));
  } else {
    out.append(authority);
  }
  std::string_view rest = url.substr(end);
  const std::size_t q = rest.find('?');
  if (q != std::string_view::npos) {
    const std::size_t hash = rest.find('#', q);
    out.append(rest.substr(0, q));
    out += "?***";
    if (hash != std::string_view::npos) {
      out.append(rest.substr(hash));
    }
  } else {
    out.append(rest);
  }
  return out;
}

}  // namespace kvbench
