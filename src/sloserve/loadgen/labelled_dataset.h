#pragma once
// A labelled data set file (JSON), as tools/train_digits_family.py writes the held-out set
// (models/digits/heldout.json): inputs for `loadgen --dataset` (labels stay client side)
// and for `profile measure`'s accuracy.
//
//   {"task": "digits", "input": {"name": "input", "datatype": "FP32", "shape": [1, 8, 8]},
//    "samples": [{"label": 3, "data": [0, 0, 5, ...]}, ...]}
//
// `shape` is one sample's shape (no batch dimension); every sample has product(shape) values.
#include <string>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve {

struct LabelledDataset {
  std::string task;
  std::string input_name;
  std::vector<int64_t> shape;  // one sample's, e.g. {1, 8, 8}
  std::vector<std::vector<float>> inputs;
  std::vector<int> labels;
};

// Errors name the file and the problem (missing key, wrong count, non-FP32, no samples).
StatusOr<LabelledDataset> LoadLabelledDataset(const std::string& path);

}  // namespace sloserve
