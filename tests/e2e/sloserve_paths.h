#pragma once
// The sloserve binary the e2e tests run and the source tree it was built from (both set
// by tests/e2e/CMakeLists.txt). One definition for all the files, which e2e_test compiles
// as one unity batch.
#include <string>

namespace sloserve::testing {

inline const std::string kBin = SLOSERVE_BINARY;
inline const std::string kRoot = SLOSERVE_SOURCE_DIR;

}  // namespace sloserve::testing
