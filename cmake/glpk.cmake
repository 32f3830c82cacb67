# GLPK (GNU Linear Programming Kit), the MILP solver of InfAdapter's planner
# (src/sloserve/infadapter/milp.cc) and the composed planner (src/sloserve/composed/). Debian's libglpk-dev ships no CMake
# package file, so this finds the header and library and defines GLPK::GLPK.
include_guard(GLOBAL)
find_path(GLPK_INCLUDE_DIR glpk.h)
find_library(GLPK_LIBRARY NAMES glpk)
if(NOT GLPK_INCLUDE_DIR OR NOT GLPK_LIBRARY)
  message(FATAL_ERROR
    "GLPK not found (glpk.h: ${GLPK_INCLUDE_DIR}, libglpk: ${GLPK_LIBRARY}). InfAdapter's "
    "planner needs it: install the Debian package libglpk-dev (scripts/setup --install-only), "
    "or point GLPK_INCLUDE_DIR / GLPK_LIBRARY at an installation.")
endif()
add_library(GLPK::GLPK UNKNOWN IMPORTED GLOBAL)  # one definition, seen by every library that links it
set_target_properties(GLPK::GLPK PROPERTIES
  IMPORTED_LOCATION "${GLPK_LIBRARY}"
  INTERFACE_INCLUDE_DIRECTORIES "${GLPK_INCLUDE_DIR}")
