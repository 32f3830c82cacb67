#pragma once
// Option values that list things: "a, b" and "name=value,name=value" (the composed
// planner's fixed_variants, per_model's model_dispatch, ...), parsed one way everywhere.
#include <string>
#include <utility>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve {

using NameValueList = std::vector<std::pair<std::string, std::string>>;

// The comma-separated items of `text`, spaces around each dropped, empty ones skipped.
std::vector<std::string> ListItems(const std::string& text);
// "a=b, c=d" -> {(a, b), (c, d)}; "" -> {}. An item that is not name=value is an error
// naming `what` (e.g. "composed: option 'fixed_variants'").
StatusOr<NameValueList> ParseNameValueList(const std::string& text, const std::string& what);

}  // namespace sloserve
