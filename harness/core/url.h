#pragma once
// URLs as kvbench reads and shows them: one given with credentials in it (user:password@host) is
// refused, and a URL is shown without its user part and query, where secrets travel.

#include <string>
#include <string_view>

namespace kvbench {

// Whether the authority of `url` (between "://" and the first '/', '?' or '#') carries a user
// part ("user@" or "user:password@"). Pure.
bool url_has_credentials(std::string_view url);

// `url` fit to print: the user part replaced by "***@" and a query by "?***". Pure.
std::string url_for_display(std::string_view url);

}  // namespace kvbench
