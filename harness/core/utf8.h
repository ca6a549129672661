#pragma once
// UTF-8 repair for text that came from outside (a server's error body or stream event) and is
// about to be written into a JSON record, which must hold valid UTF-8. Pure.

#include <string>
#include <string_view>

namespace kvbench {

// `text` with every byte that is not part of a well-formed UTF-8 sequence (stray continuation
// bytes, truncated or overlong sequences, surrogates, code points above U+10FFFF) replaced by
// U+FFFD. Valid text comes back unchanged.
std::string valid_utf8(std::string_view text);

}  // namespace kvbench
