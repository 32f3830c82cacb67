# LibTorch (Debian's libtorch-dev), for the TorchScript executor (src/sloserve/torch/).
# Debian's TorchConfig.cmake pulls in Caffe2's whole configuration (protobuf, CUDA probes,
# its own compile flags); the executor needs only the headers and three libraries, so
# this finds them and defines Torch::Torch. The headers are SYSTEM: they do not build
# warning-free under -Wall -Wextra -Wpedantic -Werror.
include_guard(GLOBAL)
find_path(TORCH_INCLUDE_DIR torch/script.h)
find_path(TORCH_API_INCLUDE_DIR torch/torch.h PATH_SUFFIXES torch/csrc/api/include)
find_library(TORCH_LIBRARY NAMES torch)
find_library(TORCH_CPU_LIBRARY NAMES torch_cpu)
find_library(C10_LIBRARY NAMES c10)
if(NOT TORCH_INCLUDE_DIR OR NOT TORCH_API_INCLUDE_DIR OR NOT TORCH_LIBRARY OR NOT TORCH_CPU_LIBRARY
   OR NOT C10_LIBRARY)
  message(FATAL_ERROR
    "LibTorch not found (torch/script.h: ${TORCH_INCLUDE_DIR}, libtorch: ${TORCH_LIBRARY}, "
    "libtorch_cpu: ${TORCH_CPU_LIBRARY}, libc10: ${C10_LIBRARY}). The TorchScript executor "
    "needs it: install the Debian package libtorch-dev (scripts/setup --install-only).")
endif()
add_library(Torch::Torch INTERFACE IMPORTED GLOBAL)  # also for apps/sloserve's plugin
set_target_properties(Torch::Torch PROPERTIES
  INTERFACE_SYSTEM_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIR};${TORCH_API_INCLUDE_DIR}"
  INTERFACE_INCLUDE_DIRECTORIES "${TORCH_INCLUDE_DIR};${TORCH_API_INCLUDE_DIR}"
  INTERFACE_LINK_LIBRARIES "${TORCH_LIBRARY};${TORCH_CPU_LIBRARY};${C10_LIBRARY}")
