// Checks what `mgd bench --trace FILE --json` wrote: the trace against the
// Chrome trace-event format (every event a named phase with pid, tid, and
// for complete events a timestamp and duration in microseconds; every track
// named), CPU and GPU tracks present, and the per-op GPU times of the JSON
// adding up to the total GPU time: one per dispatch (nothing left out), no
// more than 10% above the total (nothing counted twice) and no less than
// half of it. The total also holds the gaps between dispatches, which a CPU
// driver on a busy 2-core machine stretches: sums of 69-75% of the total
// were seen there with ctest -j2, so the count, not the sum, is what shows a
// dispatch left out.
//   trace_check TRACE.json BENCH.json
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>

namespace {

int Fail(const std::string& what) {
  std::fprintf(stderr, "trace_check: %s\n", what.c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 3) return Fail("usage: trace_check TRACE.json BENCH.json");
  nlohmann::json trace, bench;
  try {
    std::ifstream t(argv[1]), b(argv[2]);
    trace = nlohmann::json::parse(t);
    bench = nlohmann::json::parse(b);
  } catch (const std::exception& e) {
    return Fail(std::string("not JSON: ") + e.what());
  }
  if (!trace.is_object() || !trace.contains("traceEvents") || !trace["traceEvents"].is_array()) {
    return Fail("no traceEvents array");
  }
  const std::set<std::string> phases = {"X", "B", "E", "i", "I", "C", "M"};
  std::set<int> used, named;
  int cpu = 0, gpu = 0;
  for (const auto& e : trace["traceEvents"]) {
    const std::string at = e.dump().substr(0, 120);
    if (!e.is_object() || !e.contains("name") || !e["name"].is_string()) return Fail("an event without a name: " + at);
    if (!e.contains("ph") || !e["ph"].is_string() || !phases.count(e["ph"].get<std::string>())) return Fail("bad ph: " + at);
    if (!e.contains("pid") || !e["pid"].is_number_integer()) return Fail("no pid: " + at);
    const std::string ph = e["ph"];
    if (ph == "M") {
      if (e["name"] == "thread_name") named.insert(e["tid"].get<int>());
      continue;
    }
    if (!e.contains("tid") || !e["tid"].is_number_integer()) return Fail("no tid: " + at);
    if (!e.contains("ts") || !e["ts"].is_number() || e["ts"].get<double>() < 0) return Fail("bad ts: " + at);
    if (ph == "X" && (!e.contains("dur") || !e["dur"].is_number() || e["dur"].get<double>() < 0)) return Fail("bad dur: " + at);
    used.insert(e["tid"].get<int>());
    cpu += e.value("cat", "") == "cpu";
    gpu += e.value("cat", "") == "gpu";
  }
  for (int tid : used) {
    if (!named.count(tid)) return Fail("track " + std::to_string(tid) + " has no thread_name");
  }
  if (cpu == 0) return Fail("no CPU events");
  if (bench["gpu_ms"]["p50"].is_null()) return 0;
  if (gpu == 0) return Fail("no GPU events");
  if (!bench["per_op"].is_array() || !bench["dispatches"].is_number_integer() ||
      bench["per_op"].size() != bench["dispatches"].get<size_t>()) {
    return Fail("per_op does not list every dispatch once: " + bench["dispatches"].dump() + " dispatches");
  }
  double sum = 0;
  for (const auto& op : bench["per_op"]) sum += op["gpu_ms"].get<double>();
  const double total = bench["gpu_ms"]["p50"].get<double>();
  if (sum > 1.1 * total || sum < 0.5 * total) {
    return Fail("per-op GPU times sum to " + std::to_string(sum) + " ms, the total is " + std::to_string(total) + " ms");
  }
  std::printf("trace_check: %zu events, %d CPU, %d GPU; per-op sum %.3f ms vs total %.3f ms\n", trace["traceEvents"].size(),
              cpu, gpu, sum, total);
  return 0;
}
