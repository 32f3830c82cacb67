#include "sloserve/loadgen/labelled_dataset.h"

#include <fstream>

#include <nlohmann/json.hpp>

namespace sloserve {

StatusOr<LabelledDataset> LoadLabelledDataset(const std::string& path) {
  std::ifstream in(path);
  if (!in) return NotFoundError("dataset " + path + ": cannot open");
  LabelledDataset set;
  try {
    const nlohmann::json j = nlohmann::json::parse(in);
    set.task = j.value("task", "");
    const auto& input = j.at("input");
    set.input_name = input.at("name").get<std::string>();
    if (input.at("datatype").get<std::string>() != "FP32")
      return InvalidArgumentError("dataset " + path + ": only FP32 inputs are supported");
    set.shape = input.at("shape").get<std::vector<int64_t>>();
    int64_t elements = 1;
    for (int64_t d : set.shape) {
      if (d < 1) return InvalidArgumentError("dataset " + path + ": input.shape needs dims >= 1");
      elements *= d;
    }
    for (const auto& s : j.at("samples")) {
      std::vector<float> data = s.at("data").get<std::vector<float>>();
      if (static_cast<int64_t>(data.size()) != elements) {
        return InvalidArgumentError(
            "dataset " + path + ": sample " + std::to_string(set.inputs.size()) + " has " +
            std::to_string(data.size()) + " values, expected " + std::to_string(elements));
      }
      set.inputs.push_back(std::move(data));
      set.labels.push_back(s.at("label").get<int>());
    }
  } catch (const nlohmann::json::exception& e) {
    return InvalidArgumentError("dataset " + path + ": " + e.what());
  }
  if (set.inputs.empty()) return InvalidArgumentError("dataset " + path + ": no samples");
  return set;
}

}  // namespace sloserve
