#include "tools/mgd/accuracy_guard.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
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

// Each output's target: the budget, or where even every layer in fp32 does
// not meet it (the error of fp16 storage alone), a quarter above that floor.
using Targets = std::map<std::string, double>;

double TargetOf(const Targets& targets, const json& output, double budget) {
  auto it = targets.find(output["name"].get<std::string>());
  return it == targets.end() ? budget : it->second;
}

// How far the outputs are past their targets, together: each output's error
// over its target, at least 1 (an output within it counts 1).
double Excess(const json& outputs, const Targets& targets, double budget) {
  double sum = 0;
  for (const json& o : outputs) sum += std::max(1.0, RelativeRms(o) / TargetOf(targets, o, budget));
  return sum;
}

bool Met(const json& outputs, const Targets& targets, double budget) {
  return std::all_of(outputs.begin(), outputs.end(),
                     [&](const json& o) { return RelativeRms(o) <= TargetOf(targets, o, budget); });
}

json OutputSummary(const json& outputs) {
  json list = json::array();
  for (const json& o : outputs) list.push_back({{"name", o["name"]}, {"relative_rms", o["relative_rms"]}});
  return list;
}

// The nodes an output past its target depends on (it included).
std::set<int> NodesBehindFailures(const Graph& graph, const json& outputs, const Targets& targets, double budget) {
  std::map<int, int> producer;
  for (size_t n = 0; n < graph.nodes.size(); ++n) {
    for (int t : graph.nodes[n].outputs) producer[t] = static_cast<int>(n);
  }
  std::vector<int> todo;
  for (const json& o : outputs) {
    if (RelativeRms(o) > TargetOf(targets, o, budget) && o.contains("tensor")) todo.push_back(o["tensor"].get<int>());
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

// The node rows behind a failing output that are not in `kept`, by growth,
// largest first.
std::vector<std::string> Candidates(const Graph& graph, const LayerErrors& layers, const json& outputs,
                                    const Targets& targets, double budget, const std::vector<std::string>& kept) {
  const std::set<int> behind = NodesBehindFailures(graph, outputs, targets, budget);
  std::vector<std::pair<double, std::string>> rows;
  for (const json& row : layers.rows) {
    if (!row.contains("node") || !row.contains("growth") || !behind.count(row["node"].get<int>())) continue;
    const std::string name = row["name"];
    if (std::binary_search(kept.begin(), kept.end(), name)) continue;
    rows.emplace_back(row["growth"].is_number() ? row["growth"].get<double>() : INFINITY, name);
  }
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::vector<std::string> names;
  for (auto& r : rows) names.push_back(std::move(r.second));
  return names;
}

std::vector<std::string> Union(std::vector<std::string> a, const std::vector<std::string>& b) {
  a.insert(a.end(), b.begin(), b.end());
  std::sort(a.begin(), a.end());
  a.erase(std::unique(a.begin(), a.end()), a.end());
  return a;
}

// The outputs of a run, as floats.
std::vector<std::vector<float>> Outputs(const Interpreter& interpreter) {
  std::vector<std::vector<float>> outputs;
  for (size_t k = 0; k < interpreter.num_outputs(); ++k) {
    const TensorRef& t = interpreter.output(k);
    outputs.emplace_back(t.as<float>(), t.as<float>() + t.elements());
  }
  return outputs;
}

// [{name, tensor, relative_rms}] of `a` against `reference`.
json OutputErrors(const Graph& graph, const std::vector<std::vector<float>>& a,
                  const std::vector<std::vector<float>>& reference) {
  json rows = json::array();
  for (size_t k = 0; k < a.size() && k < reference.size(); ++k) {
    double diff2 = 0, ref2 = 0;
    for (size_t i = 0; i < a[k].size() && i < reference[k].size(); ++i) {
      const double d = static_cast<double>(a[k][i]) - reference[k][i];
      diff2 += d * d;
      ref2 += static_cast<double>(reference[k][i]) * reference[k][i];
    }
    const double rms = ref2 > 0 ? std::sqrt(diff2 / ref2) : (diff2 > 0 ? INFINITY : 0.0);
    const int tensor = graph.outputs[k];
    rows.push_back({{"name", graph.tensors[static_cast<size_t>(tensor)].name}, {"tensor", tensor},
                    {"relative_rms", std::isfinite(rms) ? json(rms) : json("inf")}});
  }
  return rows;
}

}  // namespace

absl::StatusOr<GuardResult> SearchAccuracyGuard(const GuardSearch& search) {
  const fs::path work(search.work);
  RunOptions run = search.run;
  run.backend_given = run.precision_given = true;
  GuardResult result;

  // fp32: once with every tensor (what each layer's fp16 error is measured
  // against), once fused, as the model runs (what the outputs are).
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
  run.dump_tensors.clear();
  std::vector<std::vector<float>> reference;
  {
    MGD_ASSIGN_OR_RETURN(RunResult r, RunOnce(run));
    reference = Outputs(*r.interpreter);
  }

  // An fp16 run with `layers` in fp32, fused: its outputs' errors.
  run.precision = "fp16";
  auto fused = [&](const std::vector<std::string>& layers) -> absl::StatusOr<json> {
    run.fp32_layers = layers;
    run.dump_tensors.clear();
    ++result.runs;
    MGD_ASSIGN_OR_RETURN(RunResult r, RunOnce(run));
    return OutputErrors(*graph, Outputs(*r.interpreter), reference);
  };
  // The same with every tensor kept: each layer's error and growth.
  auto layered = [&](const std::vector<std::string>& layers) -> absl::StatusOr<LayerErrors> {
    run.fp32_layers = layers;
    run.dump_tensors = (work / "fp16").string();
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

  std::vector<std::string> kept = Union({}, search.run.fp32_layers);
  const double budget = search.budget;
  Targets targets;  // the budget, until the floor is known
  MGD_ASSIGN_OR_RETURN(json now, fused(kept));
  result.outputs_before = OutputSummary(now);
  if (Met(now, targets, budget)) {
    result.fp32_layers = kept;
    result.outputs_after = result.outputs_before;
    result.met = true;
    return result;
  }
  MGD_ASSIGN_OR_RETURN(LayerErrors layers, layered(kept));

  // 1. One layer at a time: the few layers that create the error (a head
  // that sums hundreds of channels into a cancelling logit).
  std::set<std::string> passed_over;
  for (int tries = 0; tries < search.max_single_tries && !Met(now, targets, budget); ++tries) {
    std::vector<std::string> candidates = Candidates(*graph, layers, now, targets, budget, kept);
    candidates.erase(std::remove_if(candidates.begin(), candidates.end(), [&](const std::string& n) { return passed_over.count(n) > 0; }),
                     candidates.end());
    if (candidates.empty()) break;
    std::vector<std::string> trial = Union(kept, {candidates[0]});
    MGD_ASSIGN_OR_RETURN(json next, fused(trial));
    if (Excess(next, targets, budget) <= 0.9 * Excess(now, targets, budget)) {
      kept = std::move(trial);
      now = std::move(next);
      MGD_ASSIGN_OR_RETURN(layers, layered(kept));
    } else {
      passed_over.insert(candidates[0]);
    }
  }

  // 2. Error that builds up over many layers and is amplified at the end:
  // every layer in fp32 gives each output its floor (fp16 storage alone);
  // an output whose floor is past the budget is held to a quarter above
  // its floor instead. Then the fewest of the largest growths that meet
  // those targets, by bisection.
  if (!Met(now, targets, budget)) {
    std::vector<std::string> every;
    for (const json& row : layers.rows) {
      if (row.contains("node")) every.push_back(row["name"]);
    }
    MGD_ASSIGN_OR_RETURN(json floor, fused(Union(kept, every)));
    for (const json& o : floor) {
      const double f = RelativeRms(o);
      if (f > budget / 1.25) {
        targets[o["name"].get<std::string>()] = std::max(budget, 1.25 * f);
        result.storage_bound.push_back({{"name", o["name"]}, {"floor", o["relative_rms"]}});
      }
    }
    const std::vector<std::string> candidates = Candidates(*graph, layers, now, targets, budget, kept);
    if (!Met(now, targets, budget) && !candidates.empty()) {
      size_t lo = 0, hi = candidates.size();  // hi: meets the targets (as the floor does)
      json at_hi = floor;
      while (lo < hi) {
        const size_t mid = (lo + hi) / 2;
        const std::vector<std::string> trial = Union(kept, {candidates.begin(), candidates.begin() + static_cast<long>(mid)});
        MGD_ASSIGN_OR_RETURN(json at_mid, fused(trial));
        if (Met(at_mid, targets, budget)) {
          hi = mid;
          at_hi = std::move(at_mid);
        } else {
          lo = mid + 1;
        }
      }
      kept = Union(kept, {candidates.begin(), candidates.begin() + static_cast<long>(hi)});
      now = std::move(at_hi);
    }
  }
  result.fp32_layers = kept;
  result.outputs_after = OutputSummary(now);
  result.met = Met(now, targets, budget);
  return result;
}

}  // namespace mgd::cli
