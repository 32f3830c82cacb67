// Peak heap while parsing an inference request (issue 16): the streaming parser keeps
// about the tensor's bytes, whatever the body's nesting or member order; the tree parser
// it replaced keeps a node per value (its peak is measured too, so the counter is seen to
// count). Its own binary: the global operator new/delete are replaced by counting ones.
#include <gtest/gtest.h>
#include <malloc.h>

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <new>
#include <string>

#include "sloserve/server/infer_request_parser.h"
#include "sloserve/server/kserve_handler.h"

namespace {

std::atomic<int64_t> g_live{0};
std::atomic<int64_t> g_peak{0};

void* Counted(void* p) {
  if (p == nullptr) throw std::bad_alloc();
  const int64_t live = g_live.fetch_add(static_cast<int64_t>(malloc_usable_size(p))) +
                       static_cast<int64_t>(malloc_usable_size(p));
  int64_t peak = g_peak.load(std::memory_order_relaxed);
  while (live > peak && !g_peak.compare_exchange_weak(peak, live)) {
  }
  return p;
}

void Uncounted(void* p) noexcept {
  if (p == nullptr) return;
  g_live.fetch_sub(static_cast<int64_t>(malloc_usable_size(p)));
  std::free(p);
}

void* AlignedAlloc(size_t n, std::align_val_t a) {
  const auto align = static_cast<size_t>(a);
  return std::aligned_alloc(align, (std::max<size_t>(n, 1) + align - 1) / align * align);
}

}  // namespace

void* operator new(size_t n) {
  return Counted(std::malloc(std::max<size_t>(n, 1)));
}
void* operator new[](size_t n) {
  return Counted(std::malloc(std::max<size_t>(n, 1)));
}
void* operator new(size_t n, const std::nothrow_t&) noexcept {
  try {
    return Counted(std::malloc(std::max<size_t>(n, 1)));
  } catch (...) {
    return nullptr;
  }
}
void* operator new[](size_t n, const std::nothrow_t& t) noexcept {
  return operator new(n, t);
}
void* operator new(size_t n, std::align_val_t a) {
  return Counted(AlignedAlloc(n, a));
}
void* operator new[](size_t n, std::align_val_t a) {
  return Counted(AlignedAlloc(n, a));
}
void operator delete(void* p) noexcept {
  Uncounted(p);
}
void operator delete[](void* p) noexcept {
  Uncounted(p);
}
void operator delete(void* p, size_t) noexcept {
  Uncounted(p);
}
void operator delete[](void* p, size_t) noexcept {
  Uncounted(p);
}
void operator delete(void* p, std::align_val_t) noexcept {
  Uncounted(p);
}
void operator delete[](void* p, std::align_val_t) noexcept {
  Uncounted(p);
}
void operator delete(void* p, size_t, std::align_val_t) noexcept {
  Uncounted(p);
}
void operator delete[](void* p, size_t, std::align_val_t) noexcept {
  Uncounted(p);
}

namespace sloserve {
namespace {

TaskInfo OpenTask() {
  TaskInfo t;
  t.name = "m";
  t.variants = {"v"};
  t.input_name = "x";
  t.default_slo = Millis(100);
  return t;
}

// Heap bytes above the starting level at the highest point of `parse()`.
template <typename F>
int64_t PeakExtraBytes(F parse) {
  const int64_t base = g_live.load();
  g_peak.store(base);
  parse();
  return g_peak.load() - base;
}

struct Measured {
  size_t body = 0;
  size_t tensor = 0;
  int64_t streaming_peak = 0;
  int64_t tree_peak = 0;
};

Measured Measure(const std::string& body) {
  Measured m;
  m.body = body.size();
  m.streaming_peak = PeakExtraBytes([&] {
    auto call = ParseInferRequestStreaming(OpenTask(), body, Seconds(60));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
    m.tensor = call->request.inputs[0].data.size();
  });
  m.tree_peak = PeakExtraBytes([&] {
    auto call = ParseInferRequestWithTree(OpenTask(), body, Seconds(60));
    ASSERT_TRUE(call.ok()) << call.status().ToString();
  });
  return m;
}

// `rows` x 64 elements of `datatype`, nested by row, with the members in `order`.
std::string NestedBody(const std::string& datatype, int rows, const std::string& order) {
  std::string data = "[";
  for (int r = 0; r < rows; ++r) {
    data += r > 0 ? ",[" : "[";
    for (int c = 0; c < 64; ++c) {
      if (c > 0) data += ',';
      data += datatype == "BYTES" ? "\"ab\"" : std::to_string((r + c) % 100);
    }
    data += "]";
  }
  data += "]";
  const std::string shape = R"("shape":[)" + std::to_string(rows) + ",64]";
  const std::string dt = R"("datatype":")" + datatype + "\"";
  const std::string name = R"("name":"x")";
  const std::string values = R"("data":)" + data;
  std::string members;
  for (char c : order) {
    if (!members.empty()) members += ',';
    members += c == 'n' ? name : c == 't' ? dt : c == 's' ? shape : values;
  }
  return R"({"inputs":[{)" + members + R"(}],"parameters":{"slo_ms":50}})";
}

TEST(InferParseMemoryTest, StreamingPeakIsAboutTheTensorTreePeakIsManyTimesTheBody) {
  struct Case {
    const char* datatype;
    const char* order;  // n name, t datatype, s shape, d data
  };
  for (const Case& c : {Case{"FP32", "ntsd"}, Case{"INT64", "ntsd"}, Case{"INT8", "ntsd"},
                        Case{"BYTES", "ntsd"}, Case{"FP32", "dnst"},  // data first: second pass
                        Case{"INT64", "ntds"}}) {                     // shape last: no reserve
    const Measured m = Measure(NestedBody(c.datatype, 1000, c.order));
    const double per_tensor = static_cast<double>(m.streaming_peak) / static_cast<double>(m.tensor);
    const double tree_per_body = static_cast<double>(m.tree_peak) / static_cast<double>(m.body);
    std::printf(
        "%-5s %s body %zu B, tensor %zu B: streaming peak %lld B (%.2fx tensor, "
        "%.2fx body), tree peak %lld B (%.1fx body)\n",
        c.datatype, c.order, m.body, m.tensor, static_cast<long long>(m.streaming_peak), per_tensor,
        static_cast<double>(m.streaming_peak) / static_cast<double>(m.body),
        static_cast<long long>(m.tree_peak), tree_per_body);
    // Reserved from the shape: the tensor plus small change. Grown by doubling when the
    // shape comes after the data, or for BYTES (variable size): under 3x while a
    // reallocation copies. The tree: a 16-byte node per value, and containers.
    const bool grown = std::string(c.order) == "ntds" || std::string(c.datatype) == "BYTES";
    EXPECT_LT(per_tensor, grown ? 3.5 : 1.25) << c.datatype << " " << c.order;
    EXPECT_GT(tree_per_body, 4.0) << c.datatype << " " << c.order;
    EXPECT_LT(m.streaming_peak, m.tree_peak) << c.datatype << " " << c.order;
  }
}

}  // namespace
}  // namespace sloserve
