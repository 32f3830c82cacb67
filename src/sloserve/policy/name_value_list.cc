#include "sloserve/policy/name_value_list.h"

#include <sstream>

namespace sloserve {

std::vector<std::string> ListItems(const std::string& text) {
  std::vector<std::string> out;
  std::stringstream in(text);
  for (std::string item; std::getline(in, item, ',');) {
    const size_t first = item.find_first_not_of(' ');
    if (first == std::string::npos) continue;
    out.push_back(item.substr(first, item.find_last_not_of(' ') + 1 - first));
  }
  return out;
}

StatusOr<NameValueList> ParseNameValueList(const std::string& text, const std::string& what) {
  NameValueList out;
  for (const std::string& item : ListItems(text)) {
    const size_t eq = item.find('=');
    std::vector<std::string> sides;
    if (eq != std::string::npos) sides = ListItems(item.substr(0, eq) + "," + item.substr(eq + 1));
    if (sides.size() != 2 || item.find('=', eq + 1) != std::string::npos)
      return InvalidArgumentError(what + ": '" + item + "' is not name=value");
    out.emplace_back(sides[0], sides[1]);
  }
  return out;
}

}  // namespace sloserve
