#pragma once
// A model repository on disk, in the spirit of Triton's: a directory per task, a
// subdirectory per variant holding its TorchScript file and a config.yaml:
//
//   ROOT/<task>/<variant>/config.yaml
//   ROOT/<task>/<variant>/model.pt        (the config's model_file)
//
//   name: cnn_small                # optional; must equal the directory name
//   platform: torchscript
//   model_file: model.pt
//   accuracy: 97.41                # held-out top-1, percent
//   inputs:  [{name: input, datatype: FP32, shape: [-1, 1, 8, 8]}]
//   outputs: [{name: scores, datatype: FP32, shape: [-1, 10]}]
//   memory_bytes: 95784            # optional, informational: the executor measures it
//
// Files directly in a task directory (a held-out set, a profile) are not variants. A
// repository may hold several tasks (each a KServe model; variant names are unique across
// them), served together from one pool (ServedProfileDir).
// Loading checks every config and refuses the repository at the first problem, naming
// the path; it does not open the model files (the executor loads them). Every variant of
// a task must declare the same input and output (the task is one KServe model). No torch
// here: the CLI and profile tools read repositories without the executor.
#include <cstdint>
#include <string>
#include <vector>

#include "sloserve/core/status.h"

namespace sloserve {

struct RepoTensorSpec {
  std::string name;
  std::string datatype;        // KServe v2, e.g. "FP32"
  std::vector<int64_t> shape;  // -1 = any; the first dimension is the batch (-1)
};

struct RepoVariant {
  std::string name;
  std::string task;
  std::string dir;         // ROOT/<task>/<variant>
  std::string model_path;  // dir/<model_file>
  double accuracy = 0;     // percent
  RepoTensorSpec input;
  RepoTensorSpec output;
  int64_t memory_bytes = 0;  // the config's figure, 0 when absent (not used for scheduling)
};

struct RepoTask {
  std::string name;
  std::string dir;
  std::vector<RepoVariant> variants;  // sorted by name
};

struct ModelRepository {
  std::string root;
  std::vector<RepoTask> tasks;  // sorted by name

  const RepoVariant* FindVariant(const std::string& name) const;
  const RepoTask* FindTask(const std::string& name) const;
};

StatusOr<ModelRepository> LoadModelRepository(const std::string& root);

// The directory of the profile `serve --model-repository` reads (profile.prof there) and
// `profile measure` writes by default: ROOT/<task> for a repository of one task (as it
// always was), ROOT for several (issue 31: one suite of every task, measured together, so
// they are served from one pool on the same measured hardware).
std::string ServedProfileDir(const ModelRepository& repo);

}  // namespace sloserve
