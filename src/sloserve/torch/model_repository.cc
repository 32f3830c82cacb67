#include "sloserve/torch/model_repository.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <filesystem>
#include <set>

#include "sloserve/core/read_file.h"
#include "sloserve/core/yaml_document.h"

namespace sloserve {
namespace {

namespace fs = std::filesystem;

const std::vector<std::string> kDatatypes = {"BOOL", "UINT8", "UINT16", "UINT32", "UINT64",
                                             "INT8", "INT16", "INT32",  "INT64",  "FP16",
                                             "FP32", "FP64",  "BF16"};

StatusOr<RepoTensorSpec> ParseTensor(const YAML::Node& list, const std::string& key,
                                     const std::string& where) {
  if (!list || !list.IsSequence() || list.size() != 1) {
    return InvalidArgumentError(where + ": '" + key +
                                "' must be a list of exactly one tensor {name, datatype, shape}");
  }
  const YAML::Node& t = list[0];
  if (!t.IsMap() || !t["name"] || !t["datatype"] || !t["shape"] || !t["shape"].IsSequence()) {
    return InvalidArgumentError(where + ": '" + key + "[0]' needs name, datatype and shape");
  }
  RepoTensorSpec spec;
  spec.name = t["name"].as<std::string>();
  spec.datatype = t["datatype"].as<std::string>();
  if (std::find(kDatatypes.begin(), kDatatypes.end(), spec.datatype) == kDatatypes.end()) {
    return InvalidArgumentError(where + ": '" + key + "[0].datatype' " + spec.datatype +
                                " is not a numeric KServe v2 datatype");
  }
  for (const auto& d : t["shape"]) {
    const int64_t v = d.as<int64_t>();
    if (v < -1 || v == 0) {
      return InvalidArgumentError(where + ": '" + key + "[0].shape' dimension " +
                                  std::to_string(v) + " must be >= 1 or -1 (any)");
    }
    spec.shape.push_back(v);
  }
  if (spec.shape.size() < 2 || spec.shape[0] != -1) {
    return InvalidArgumentError(where + ": '" + key +
                                "[0].shape' must start with the batch dimension -1 and have "
                                "at least one more dimension");
  }
  return spec;
}

bool SameTensor(const RepoTensorSpec& a, const RepoTensorSpec& b) {
  return a.name == b.name && a.datatype == b.datatype && a.shape == b.shape;
}

StatusOr<RepoVariant> LoadVariant(const fs::path& dir, const std::string& task) {
  const fs::path config = dir / "config.yaml";
  const std::string where = config.string();
  std::error_code ec;  // unreadable or overlong paths are "not there", not a throw
  if (!fs::is_regular_file(config, ec)) {
    return InvalidArgumentError("model repository: variant directory " + dir.string() +
                                " has no config.yaml (expected " + where + ")");
  }
  RepoVariant v;
  v.name = dir.filename().string();
  v.task = task;
  v.dir = dir.string();
  try {
    ASSIGN_OR_RETURN(const std::string text,
                     ReadFileBounded(where, "model config", size_t{1} << 20));
    ASSIGN_OR_RETURN(const YAML::Node root, LoadYamlDocument(text, where));
    if (!root.IsMap()) return InvalidArgumentError(where + ": top level must be a mapping");
    static const std::set<std::string> kKeys = {"name",   "platform", "model_file",  "accuracy",
                                                "inputs", "outputs",  "memory_bytes"};
    for (const auto& kv : root) {
      const std::string key = kv.first.as<std::string>();
      if (!kKeys.count(key)) {
        return InvalidArgumentError(where + ": unknown key '" + key +
                                    "' (keys: name, platform, model_file, accuracy, inputs, "
                                    "outputs, memory_bytes)");
      }
    }
    if (root["name"] && root["name"].as<std::string>() != v.name) {
      return InvalidArgumentError(where + ": 'name' " + root["name"].as<std::string>() +
                                  " differs from its directory name " + v.name);
    }
    const std::string platform =
        root["platform"] ? root["platform"].as<std::string>() : "torchscript";
    if (platform != "torchscript") {
      return InvalidArgumentError(where + ": 'platform' " + platform +
                                  " is not supported (only torchscript)");
    }
    // memory_bytes is optional: the executor accounts the loaded module's bytes itself.
    for (const char* key : {"model_file", "accuracy", "inputs", "outputs"}) {
      if (!root[key]) {
        return InvalidArgumentError(where + ": '" + key +
                                    "' is required (required: model_file, accuracy, inputs, "
                                    "outputs; docs/torch.md)");
      }
    }
    const std::string model_file = root["model_file"].as<std::string>();
    if (model_file.empty() || model_file.find('/') != std::string::npos) {
      return InvalidArgumentError(where + ": 'model_file' must be a file name in " + v.dir);
    }
    v.model_path = (dir / model_file).string();
    if (!fs::is_regular_file(v.model_path, ec)) {
      return InvalidArgumentError(where + ": model file " + v.model_path + " does not exist");
    }
    v.accuracy = root["accuracy"].as<double>();
    if (!(v.accuracy >= 0 && v.accuracy <= 100)) {
      return InvalidArgumentError(where + ": 'accuracy' must be in [0, 100], got " +
                                  root["accuracy"].as<std::string>());
    }
    if (root["memory_bytes"]) v.memory_bytes = root["memory_bytes"].as<int64_t>();
    if (v.memory_bytes < 0) {
      return InvalidArgumentError(where + ": 'memory_bytes' must be >= 0, got " +
                                  std::to_string(v.memory_bytes));
    }
    ASSIGN_OR_RETURN(v.input, ParseTensor(root["inputs"], "inputs", where));
    ASSIGN_OR_RETURN(v.output, ParseTensor(root["outputs"], "outputs", where));
  } catch (const YAML::Exception& e) {
    return InvalidArgumentError(where + ":" + std::to_string(e.mark.line + 1) + ": " + e.msg);
  }
  return v;
}

// The subdirectories of `dir`, sorted; an unreadable directory is an error naming it
// (directory_iterator's throwing form would abort the process).
StatusOr<std::vector<fs::path>> SubDirectories(const fs::path& dir) {
  std::vector<fs::path> out;
  std::error_code ec;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    std::error_code entry_ec;
    if (it->is_directory(entry_ec)) out.push_back(it->path());
  }
  if (ec) {
    return InvalidArgumentError("model repository: cannot list " + dir.string() + ": " +
                                ec.message());
  }
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

const RepoVariant* ModelRepository::FindVariant(const std::string& name) const {
  for (const RepoTask& t : tasks) {
    for (const RepoVariant& v : t.variants) {
      if (v.name == name) return &v;
    }
  }
  return nullptr;
}

const RepoTask* ModelRepository::FindTask(const std::string& name) const {
  for (const RepoTask& t : tasks) {
    if (t.name == name) return &t;
  }
  return nullptr;
}

StatusOr<ModelRepository> LoadModelRepository(const std::string& root) {
  std::error_code ec;
  if (!fs::is_directory(root, ec)) {
    return InvalidArgumentError("model repository: " + root + " is not a directory");
  }
  ModelRepository repo;
  repo.root = root;
  std::set<std::string> variant_names;
  ASSIGN_OR_RETURN(std::vector<fs::path> task_dirs, SubDirectories(root));
  for (const fs::path& task_dir : task_dirs) {
    RepoTask task;
    task.name = task_dir.filename().string();
    task.dir = task_dir.string();
    ASSIGN_OR_RETURN(std::vector<fs::path> variant_dirs, SubDirectories(task_dir));
    for (const fs::path& variant_dir : variant_dirs) {
      ASSIGN_OR_RETURN(RepoVariant v, LoadVariant(variant_dir, task.name));
      if (!variant_names.insert(v.name).second) {
        return InvalidArgumentError("model repository: variant name " + v.name + " (" + v.dir +
                                    ") is used by two tasks; names must be unique");
      }
      task.variants.push_back(std::move(v));
    }
    if (task.variants.empty()) continue;  // not a task: no variant subdirectory
    std::sort(task.variants.begin(), task.variants.end(),
              [](const RepoVariant& a, const RepoVariant& b) { return a.name < b.name; });
    for (const RepoVariant& v : task.variants) {
      const RepoVariant& first = task.variants.front();
      if (!SameTensor(v.input, first.input) || !SameTensor(v.output, first.output)) {
        return InvalidArgumentError("model repository: " + v.dir + "/config.yaml declares other " +
                                    "inputs or outputs than " + first.dir +
                                    "/config.yaml (variants of one task share them)");
      }
    }
    repo.tasks.push_back(std::move(task));
  }
  if (repo.tasks.empty()) {
    return InvalidArgumentError("model repository: " + root +
                                " has no task (expected <task>/<variant>/config.yaml)");
  }
  std::sort(repo.tasks.begin(), repo.tasks.end(),
            [](const RepoTask& a, const RepoTask& b) { return a.name < b.name; });
  return repo;
}

std::string ServedProfileDir(const ModelRepository& repo) {
  return repo.tasks.size() == 1 ? repo.tasks.front().dir : repo.root;
}

}  // namespace sloserve
