#include "sloserve/core/echo_name.h"

namespace sloserve {

std::string EchoName(std::string_view name) {
  if (name.size() <= kMaxEchoedName) return std::string(name);
  size_t cut = kMaxEchoedName;
  // Not inside a multi-byte character: back up over continuation bytes (10xxxxxx), at
  // most 3 (a longer run is not UTF-8 anyway and is cut as bytes).
  for (int i = 0; i < 3 && cut > 0 && (static_cast<unsigned char>(name[cut]) & 0xC0) == 0x80; ++i) {
    --cut;
  }
  std::string out(name.substr(0, cut));
  out += "\xE2\x80\xA6(" + std::to_string(name.size()) + " bytes)";
  return out;
}

}  // namespace sloserve
