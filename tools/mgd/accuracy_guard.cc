#include "tools/mgd/accuracy_guard.h"

#include <fmt/format.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <optional>
#include <set>

#include "delegate/find_compiled.h"
#include "model/status_macros.h"
#include "tools/mgd/layer_errors.h"
#include "tools/mgd/run_once.h"

namespace mgd::cli {
namespace {

namespace fs = std::filesystem;
using nlohmann::json;

// How far the outputs are past the budget, together: each output's error
// over the budget, at least 1 (an output within it counts 1).
double Excess(const json& outputs, double budget) {
  double sum = 0;
  for (const json& o : outputs) sum += std::max(1.0, RelativeRms(o) / budget);
  return sum;
}

bool Met(const json& outputs, double budget) {
  return std::all_of(outputs.begin(), outputs.end(), [&](const json& o) { return RelativeRms(o) <= budget; });
}

json OutputSummary(const json& outputs) {
  json list = json::array();
  for (const json& o : outputs) list.push_back({{"name", o["name"]}, {"relative_rms", o["relative_rms"]}});
  return list;
}

// The nodes an output past the budget depends on (it included).
std::set<int> NodesBehindFailures(const Graph& graph, const json& outputs, double budget) {
  std::map<int, int> producer;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int t : graph.nodes[n].outputs) producer[t] = static_cast<int>(n);
  }
  std::vector<int> todo;
  for (const json& o : outputs) {
    if (RelativeRms(o) > budget && o.contains("tensor")) todo.push_back(o["tensor"].get<int>());
  }
  std::set<int> nodes;
  while (!todo.empty()) {
    const int t = todo.back();
    todo.pop_back();
    auto it = producer.find(t);
    if (it == producer.end() || !nodes.insert(it->second).second) continue;
    for (int input : graph.nodes[static_cast<size_t>(it->second)].inputs) {
      if (input >= 0) todo.push_back(input);
    }
  }
  return nodes;
}

}  // namespace

absl::StatusOr<GuardResult> SearchAccuracyGuard(const GuardSearch& search) {
  const fs::path work(search.work);
  RunOptions run = search.run;
  run.backend_given = run.precision_given = true;
  GuardResult result;

  run.precision = "fp32";
  run.dump_tensors = (work / "fp32").string();
  std::optional<Graph> graph;
  {
    MGD_ASSIGN_OR_RETURN(RunResult r, RunOnce(run));
    if (r.backend.delegate == nullptr) return absl::FailedPreconditionError("the accuracy guard needs a GPU: none was found");
    result.backend = run.backend = r.backend.backend;  // fp16 on the GPU fp32 ran on
    result.device = r.backend.device;
    graph = r.interpreter->graph();
  }
  MGD_ASSIGN_OR_RETURN(result.model_digest, ModelStructureDigest(*graph));

  // One fp16 run with `layers` in fp32: its layer errors.
  run.precision = "fp16";
  auto fp16 = [&](const std::vector<std::string>& layers) -> absl::StatusOr<LayerErrors> {
    run.fp32_layers = layers;
    run.dump_tensors = (work / fmt::format("fp16_{}", result.runs)).string();
    ++result.runs;
    {
      MGD_ASSIGN_OR_RETURN(RunResult r, RunOnce(run));
      (void)r;
    }
    auto errors = CompareLayers(run.dump_tensors, (work / "fp32").string(), *graph, search.budget);
    std::error_code ignored;
    fs::remove_all(run.dump_tensors, ignored);
    return errors;
  };

  std::vector<std::string> kept = search.run.fp32_layers;
  std::sort(kept.begin(), kept.end());
  kept.erase(std::unique(kept.begin(), kept.end()), kept.end());
  MGD_ASSIGN_OR_RETURN(LayerErrors now, fp16(kept));
  result.outputs_before = OutputSummary(now.outputs);
  std::set<std::string> passed_over;
  for (int tries = 0; tries < search.max_tries && !Met(now.outputs, search.budget); ++tries) {
    // The candidate: the largest growth among the layers behind a failing
    // output, neither kept nor passed over.
    const std::set<int> behind = NodesBehindFailures(*graph, now.outputs, search.budget);
    const json* best = nullptr;
    for (const json& row : now.rows) {
      if (!row.contains("node") || !row.contains("growth") || !behind.count(row["node"].get<int>())) continue;
      const std::string name = row["name"];
      if (passed_over.count(name) || std::binary_search(kept.begin(), kept.end(), name)) continue;
      auto growth = [](const json& r) { return r["growth"].is_number() ? r["growth"].get<double>() : INFINITY; };
      if (best == nullptr || growth(row) > growth(*best)) best = &row;
    }
    if (best == nullptr) break;
    const std::string name = (*best)["name"];
    std::vector<std::string> trial = kept;
    trial.insert(std::upper_bound(trial.begin(), trial.end(), name), name);
    MGD_ASSIGN_OR_RETURN(LayerErrors next, fp16(trial));
    if (Excess(next.outputs, search.budget) <= 0.9 * Excess(now.outputs, search.budget)) {
      kept = std::move(trial);
      now = std::move(next);
    } else {
      passed_over.insert(name);
    }
  }
  result.fp32_layers = kept;
  result.outputs_after = OutputSummary(now.outputs);
  result.met = Met(now.outputs, search.budget);
  return result;
}

}  // namespace mgd::cli
