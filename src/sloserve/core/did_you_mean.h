#pragma once
// "Did you mean" hints for misspelled names (config keys, policy options, variants,
// report fields). One edit-distance rule for every error message that suggests a name.
#include <string>
#include <string_view>
#include <vector>

namespace sloserve {

// Optimal string alignment distance: insertions, deletions, substitutions and swaps of
// two adjacent characters each cost 1 ("varaint" -> "variant" is 1). Case-sensitive.
size_t EditDistance(std::string_view a, std::string_view b);

// The candidate most likely meant by `name`, or "" if none is close. A candidate is close
// when its distance to `name` (compared case-insensitively) is at most a third of
// `name`'s length (at least 1) and smaller than both lengths, so a one-letter name does
// not "mean" every other one-letter name. A dotted candidate ("workload.load_qps") is
// also compared by its last part, so "load_qps" suggests it. Ties go to the earlier
// candidate; `name` itself is never suggested. Failing that, the one candidate that
// starts with `name` (4+ characters; "violation" -> "violation_rate"), if only one does.
std::string ClosestName(std::string_view name, const std::vector<std::string>& candidates);

// "did you mean 'x'? " when ClosestName finds one, else "": the start of a
// parenthesized hint such as "(did you mean 'x'? known: a, b, c)".
std::string DidYouMean(std::string_view name, const std::vector<std::string>& candidates);

// "a, b, c".
std::string JoinNames(const std::vector<std::string>& names);

}  // namespace sloserve
