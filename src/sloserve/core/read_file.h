#pragma once
// Reading a whole input file whose path comes from a user: a directory is refused by name
// (an ifstream opens one and reads nothing, so it passed for an empty file), and reading
// stops at a size limit, so /dev/zero, /dev/urandom or an endless pipe cannot hang the
// process or exhaust its memory. Other non-regular files (a pipe, /dev/stdin) are read.
#include <cstddef>
#include <istream>
#include <string>

#include "sloserve/core/status.h"

namespace sloserve {

// The limit for data files (profile suites, traces): the largest shipped is 11 MB.
inline constexpr size_t kMaxInputFileBytes = size_t{1} << 30;

// The content of `path`. Errors name the path and `what` ("config file"):
// "PATH: cannot open config file", "PATH: is a directory, not a config file",
// "PATH: config file larger than 8 MiB (the limit)".
StatusOr<std::string> ReadFileBounded(const std::string& path, const std::string& what,
                                      size_t max_bytes);
// The same for a stream already open (stdin), named `name` in errors.
StatusOr<std::string> ReadStreamBounded(std::istream& in, const std::string& name,
                                        const std::string& what, size_t max_bytes);

}  // namespace sloserve
