// Bad input to a model-aware placement experiment is refused before a run, naming the
// model or the key.
#include <gtest/gtest.h>

#include "sloserve/cluster/cluster_experiment.h"

namespace sloserve {
namespace {

const char* kBase = R"(
suite: t5-translation
policies: colocation
cluster: {machines: 2}
workload: {model: t5-small, count: 2}
)";

std::string ErrorOf(std::vector<std::string> sets, const std::string& yaml = kBase) {
  auto r = RunClusterExperiment(yaml, "test.yaml", sets);
  return r.ok() ? "" : std::string(r.status().message());
}

TEST(ClusterConfigTest, AModelLargerThanEveryMachineIsRefusedNamingIt) {
  const std::string e = ErrorOf({"workload.model=t5-3b", "cluster.cache_mb=4000"});
  EXPECT_NE(e.find("t5-3b"), std::string::npos) << e;
  EXPECT_NE(e.find("larger than every machine"), std::string::npos) << e;
  EXPECT_EQ(ErrorOf({"workload.model=t5-3b", "cluster.cache_mb=12000"}), "");
}

TEST(ClusterConfigTest, TargetOngoingRequestsMustBePositive) {
  for (const char* v : {"0", "-2"}) {
    const std::string e = ErrorOf({std::string("cluster.target_ongoing_requests=") + v});
    EXPECT_NE(e.find("cluster.target_ongoing_requests"), std::string::npos) << e;
  }
  EXPECT_EQ(ErrorOf({"cluster.target_ongoing_requests=1"}), "");
}

TEST(ClusterConfigTest, NegativeNetworkTimeIsRefusedNamingTheKey) {
  const std::string e = ErrorOf({"cluster.network_s=-0.5"});
  EXPECT_NE(e.find("cluster.network_s"), std::string::npos) << e;
}

TEST(ClusterConfigTest, OtherBadInputNamesTheKey) {
  EXPECT_NE(ErrorOf({"cluster.cache_mb=abc"}).find("cluster.cache_mb"), std::string::npos);
  EXPECT_NE(ErrorOf({"workload.proc_cores=5"}).find("workload.proc_cores"), std::string::npos);
  EXPECT_NE(ErrorOf({"workload.model=t5-huge"}).find("t5-huge"), std::string::npos);
  EXPECT_NE(ErrorOf({"policies=fastest"}).find("fastest"), std::string::npos);
  EXPECT_NE(ErrorOf({"cluster.netwrk_s=1"}).find("cluster.netwrk_s"), std::string::npos);
  EXPECT_NE(ErrorOf({"workload.kind=bursty"}).find("workload.kind"), std::string::npos);
  EXPECT_NE(ErrorOf({"cluster.machines=0"}).find("cluster.machines"), std::string::npos);
  EXPECT_NE(ErrorOf({}, "cluster: [1, 2\n").find("test.yaml"), std::string::npos);
}

}  // namespace
}  // namespace sloserve
