// mgd check: where fp16 goes wrong. Runs the model on the GPU twice, in fp32
// and in fp16, keeping every tensor (as `mgd run --dump-tensors`: fusion off,
// so each layer's output is stored in the precision's type), and lists per
// layer how far fp16 is from fp32, how much of that the layer added itself
// (its error over its inputs'), and the first layer past the threshold.
#include <fmt/format.h>
#include <cmath>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <optional>

#include "base/json_text.h"
#include "model/reader.h"
#include "model/status_macros.h"
#include "tools/mgd/commands.h"
#include "tools/mgd/layer_errors.h"
#include "tools/mgd/run_once.h"
#include "tools/mgd/tensor_dump.h"

namespace mgd::cli {

using nlohmann::json;

absl::Status Check(const CheckOptions& options) {
  if (options.backend == "cpu") {
    return UsageError("check compares the GPU's fp16 with its fp32: --backend auto, vulkan or gl");
  }
  WorkFolder work;
  MGD_RETURN_IF_ERROR(MakeWorkFolder(work, options.out, "check"));

  RunOptions run;
  run.model = options.model;
  run.backend = options.backend;
  run.backend_given = run.precision_given = true;
  run.inputs = options.inputs;
  run.workgroups = options.workgroups;
  if (run.inputs.empty()) {
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(options.model));
    MGD_ASSIGN_OR_RETURN(run.inputs, GeneratedInputs(graph, work.path));
  }

  std::optional<Graph> graph;  // as the interpreter holds it (the indices the dumps name)
  std::string backend, device;
  std::vector<std::string> fp32_layers;
  for (const char* precision : {"fp32", "fp16"}) {
    run.precision = precision;
    run.dump_tensors = (work.path / precision).string();
    if (run.precision == "fp16") {
      run.fp16_arithmetic = options.fp16_arithmetic;
      run.fp32_layers = options.fp32_layers;
      run.table_guard = options.table_guard;
    }
    MGD_ASSIGN_OR_RETURN(RunResult r, RunOnce(run));
    if (r.backend.delegate == nullptr) return absl::FailedPreconditionError("check needs a GPU (Vulkan or GLES): none was found");
    backend = r.backend.backend;
    device = r.backend.device;
    run.backend = backend;  // fp16 on the GPU fp32 ran on
    if (!graph) graph = r.interpreter->graph();  // the same graph both times
    fp32_layers = r.backend.delegate->fp32_layers();
  }
  MGD_ASSIGN_OR_RETURN(LayerErrors e,
                       CompareLayers((work.path / "fp16").string(), (work.path / "fp32").string(), *graph, options.threshold));
  const json& rows = e.rows;
  const json& first = e.first;
  const json& worst = e.largest;
  const json& model_outputs = e.outputs;
  if (options.json) {
    std::printf("%s\n", JsonText(json{{"model", options.model}, {"backend", backend}, {"device", device},
                                      {"threshold", options.threshold},
                                      {"input", options.inputs.empty() ? json("generated: sin(0.01 i)") : json(options.inputs)},
                                      {"fp32_layers", fp32_layers}, {"tensors", rows}, {"outputs", model_outputs},
                                      {"first_past_threshold", first}, {"largest_growth", worst}})
                            .c_str());
    return absl::OkStatus();
  }
  auto number = [](const json& v) { return v.is_number() ? fmt::format("{:.3g}", v.get<double>()) : JsonText(v); };
  auto describe = [&](const json& r) {
    return fmt::format("node {} ({}) '{}': relative RMS {}, {}x its inputs' error", r["node"].get<int>(),
                       r["op"].get<std::string>(), r["name"].get<std::string>(), number(r["relative_rms"]), number(r["growth"]));
  };
  fmt::print("{} on {} ({}): fp16 against fp32, every tensor stored (fusion off); input: {}\n", options.model, backend,
             device, options.inputs.empty() ? "generated, sin(0.01 i)" : fmt::format("{}", fmt::join(options.inputs, ", ")));
  fmt::print("growth: a layer's error over the largest of its inputs' (at least fp16's rounding, {:.2g})\n", kFp16Rounding);
  if (!fp32_layers.empty()) fmt::print("computed in fp32 (the accuracy guard): {}\n", fmt::join(fp32_layers, ", "));
  fmt::print("\n");
  fmt::print("{:>5}  {:<20} {:>10} {:>8}  {}\n", "node", "op", "rel. RMS", "growth", "tensor");
  for (const json& r : rows) {
    if (!r.contains("node")) continue;
    const bool is_first = !first.is_null() && r["name"] == first["name"];
    fmt::print("{:>5}  {:<20} {:>10} {:>8}  {}{}\n", r["node"].get<int>(), r["op"].get<std::string>(),
               r.contains("error") ? r["error"].get<std::string>() : number(r["relative_rms"]),
               r.contains("growth") ? number(r["growth"]) : "-", r["name"].get<std::string>(),
               is_first ? fmt::format("   <-- first past {:g}", options.threshold) : "");
  }
  fmt::print("\noutputs:\n");
  for (const json& r : model_outputs) fmt::print("  '{}': relative RMS {}\n", r["name"].get<std::string>(), number(r["relative_rms"]));
  fmt::print("{}\n", first.is_null() ? fmt::format("no layer is past {:g}", options.threshold)
                                     : fmt::format("first layer past {:g}: {}", options.threshold, describe(first)));
  if (!worst.is_null()) fmt::print("largest growth: {}\n", describe(worst));
  return absl::OkStatus();
}

}  // namespace mgd::cli
