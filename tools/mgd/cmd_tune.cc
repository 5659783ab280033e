// mgd tune: for each distinct dispatch of the models (by its tuning key),
// candidate workgroups within the device's limits timed alone on the GPU with
// timestamps (median of repeats after warm-up runs), pruned by successive
// halving; the winners are merged into a workgroup table, and the gain over
// the default calculator is printed per model.
#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "base/files.h"
#include "base/json_text.h"
#include "interpreter/interpreter.h"
#include "model/reader.h"
#include "model/writer.h"
#include "model/status_macros.h"
#include "tools/mgd/backend_choice.h"
#include "tools/mgd/commands.h"
#include "delegate/tune.h"
#include "tools/mgd/accuracy_guard.h"
#include "tools/mgd/layer_errors.h"
#include "tools/mgd/tune_conv_settings.h"
#include "tools/mgd/tune_int8_filters.h"

namespace mgd::cli {
namespace {

using Clock = std::chrono::steady_clock;

// A line on stderr redrawn in place, only on a terminal.
class Progress {
 public:
  explicit Progress(std::string label) : label_(std::move(label)), tty_(isatty(STDERR_FILENO) != 0) {}
  void Show(size_t done, size_t total) {
    if (!tty_ || total == 0) return;
    const size_t width = 30, filled = width * done / total;
    std::fprintf(stderr, "\r%s [%s%s] %zu/%zu", label_.c_str(), std::string(filled, '#').c_str(),
                 std::string(width - filled, '.').c_str(), done, total);
    if (done == total) std::fprintf(stderr, "\n");
  }

 private:
  std::string label_;
  bool tty_;
};

struct ModelSummary {
  std::string model;
  size_t dispatches = 0, tuned = 0;
  double default_us = 0, tuned_us = 0, seconds = 0;
  std::optional<GuardResult> guard;  // with --accuracy
};

std::string OutputsText(const nlohmann::json& outputs) {
  std::vector<std::string> parts;
  for (const auto& o : outputs) {
    parts.push_back(fmt::format("{} {}", o["name"].get<std::string>(),
                                o["relative_rms"].is_number() ? fmt::format("{:.2g}", o["relative_rms"].get<double>())
                                                              : JsonText(o["relative_rms"])));
  }
  return fmt::format("{}", fmt::join(parts, ", "));
}

// The accuracy guard for one model, merged into `table`.
absl::StatusOr<GuardResult> GuardModel(const TuneOptions& options, const std::string& path, const std::string& backend,
                                       tuning::Table& table) {
  WorkFolder work;
  MGD_RETURN_IF_ERROR(MakeWorkFolder(work, "", "tune"));
  GuardSearch search;
  search.run.model = path;
  search.run.backend = backend;
  search.run.table_guard = false;  // the search decides every fp32 layer
  search.run.fp16_arithmetic = options.fp16_arithmetic;
  search.run.inputs = options.inputs;
  if (search.run.inputs.empty()) {
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(path));
    MGD_ASSIGN_OR_RETURN(search.run.inputs, GeneratedInputs(graph, work.path));
  }
  search.budget = options.budget;
  search.work = work.path.string();
  MGD_ASSIGN_OR_RETURN(GuardResult guard, SearchAccuracyGuard(search));
  tuning::AccuracyEntry entry;
  entry.model = guard.model_digest;
  entry.name = std::filesystem::path(path).filename().string();
  entry.budget = options.budget;
  entry.fp32_layers = guard.fp32_layers;
  tuning::Merge(table, entry);
  return guard;
}

nlohmann::json Int8FiltersJson(const Int8FilterChoice& c) {
  if (c.models == 0) return nullptr;
  // dot_ms and dot: null where the device has no integer dot products.
  return {{"bits", c.bits},
          {"models", c.models},
          {"int8_ms", c.int8_ms},
          {"float_ms", c.float_ms},
          {"dot_ms", c.dot_ms ? nlohmann::json(*c.dot_ms) : nlohmann::json(nullptr)},
          {"dot", c.dot_ms ? nlohmann::json(c.dot) : nlohmann::json(nullptr)}};
}

nlohmann::json ConvSearchJson(const std::optional<tuning::ConvSearch>& search) {
  if (!search) return nullptr;
  auto settings = [](const tuning::ConvSettings& c) {
    return nlohmann::json{{"conv_block_x", c.block_x}, {"conv_block_slices", c.block_slices}, {"conv_block_flat", c.flat},
                          {"split_conv_outputs", c.split_conv_outputs}, {"gate_invocations", c.gate_invocations},
                          {"split_fused_sums", c.split_fused}};
  };
  nlohmann::json tried = nlohmann::json::array();
  for (const auto& t : search->tried) tried.push_back({{"step", t.step}, {"settings", settings(t.settings)}, {"ms", t.ms}});
  return {{"start", settings(search->start)}, {"start_ms", search->start_ms}, {"best", settings(search->best)},
          {"best_ms", search->best_ms}, {"tried", tried}};
}

}  // namespace

absl::Status Tune(const TuneOptions& options) {
  if (options.max_candidates < 1) return UsageError("--max-candidates must be >= 1");
  if (options.accuracy && !(options.budget > 0)) return UsageError("--budget must be > 0");
  if (!options.inputs.empty() && (!options.accuracy || options.models.size() != 1)) {
    return UsageError("--input is the representative input of --accuracy, for one model");
  }
  if (options.skip_workgroups && !options.accuracy && !options.conv_settings) {
    return UsageError("--skip-workgroups leaves nothing to do without --accuracy or --conv-settings");
  }
  RunOptions run;
  run.precision = options.precision;
  MGD_ASSIGN_OR_RETURN(GpuDelegateOptions gpu_options, DelegateOptionsFrom(run));
  if (options.backend == "cpu") return UsageError("--backend cpu: there are no workgroups to tune on the CPU");
  MGD_ASSIGN_OR_RETURN(BackendChoice probe, ChooseBackend(options.backend, gpu_options));
  if (probe.delegate == nullptr) return absl::FailedPreconditionError("no GPU found: nothing to tune");
  const gpu::GpuInfo info = probe.delegate->device().info();
  const std::string api = probe.backend;  // "auto" resolved, for the delegates made below
  if (!info.timestamps && !options.skip_workgroups) return absl::FailedPreconditionError(fmt::format("{}: no GPU timestamps to tune with", info.device_name));

  tuning::Table table;
  if (PathExists(options.out)) {
    auto existing = tuning::ReadTableFile(options.out);
    if (!existing.ok()) return UsageError(fmt::format("--out {}", existing.status().message()));
    if (!tuning::Matches(existing->gpu, info)) {
      return UsageError(fmt::format("--out {}: the table is for another GPU ('{}' '{}'); tuning {} into it would mix GPUs",
                                    options.out, existing->gpu.vendor, existing->gpu.device, info.device_name));
    }
    table = std::move(*existing);
  } else {
    table.gpu = {gpu::ApiName(info.api), info.vendor, info.device_name, ""};
  }
  // A table of accuracy entries alone is no tuned table of workgroups.
  if (!options.skip_workgroups) table.tuned = true;
  table.notes = fmt::format("Tuned by mgd tune on {} ({}, driver {}, {}).", info.device_name, gpu::ApiName(info.api),
                            info.driver_version, info.api_version);
  // The convolution settings first: the workgroups are then tuned for the
  // grids those settings give.
  std::optional<tuning::ConvSearch> conv;
  if (options.conv_settings) {
    // From what the models compile with now: the --out table's fields, else
    // the built-in table's or the defaults (the probe has no other table).
    const tuning::ConvSettings start = tuning::ConvSettingsOf({&table}, probe.delegate->conv_settings());
    auto search = TuneConvSettings(options.models, run, api, start, table);
    if (!search.ok()) return search.status();
    conv = std::move(*search);
  }
  probe = {};
  TuningRecorder recorder;  // outlives the delegate
  gpu_options.observers.push_back(&recorder);
  gpu_options.workgroups = table;
  MGD_ASSIGN_OR_RETURN(BackendChoice backend, ChooseBackend(api, gpu_options));
  GpuDelegate& delegate = *backend.delegate;

  std::map<std::string, tuning::Entry> done;  // key -> result, across models
  std::vector<ModelSummary> summaries;
  for (const std::string& path : options.models) {
    const auto start = Clock::now();
    const size_t first_partition = recorder.partitions();
    MGD_ASSIGN_OR_RETURN(Graph graph, ReadModelFile(path));
    InterpreterOptions interpreter_options;
    interpreter_options.delegates.push_back(&delegate);
    auto interpreter = Interpreter::Create(std::move(graph), std::move(interpreter_options));
    if (!interpreter.ok()) return WithModelPath(path, interpreter.status());
    ModelSummary summary;
    summary.model = path;
    Progress progress("tuning " + std::filesystem::path(path).filename().string());
    if (!options.skip_workgroups) {
      mgd::TuneOptions tune;
      tune.max_candidates = static_cast<size_t>(options.max_candidates);
      tune.progress = [&](size_t done_count, size_t total) { progress.Show(done_count, total); };
      MGD_ASSIGN_OR_RETURN(TuneSummary result, TunePrepared(recorder, info, first_partition, tune, done, table));
      summary.dispatches = result.dispatches;
      summary.tuned = result.tuned;
      summary.default_us = result.default_us;
      summary.tuned_us = result.tuned_us;
    }
    if (options.accuracy) {
      auto guard = GuardModel(options, path, backend.backend, table);
      if (!guard.ok()) return WithModelPath(path, guard.status());
      summary.guard = std::move(*guard);
    }
    summary.seconds = std::chrono::duration<double>(Clock::now() - start).count();
    summaries.push_back(summary);
  }
  // How int8 models' filters are stored, timed over the tuned workgroups.
  Int8FilterChoice int8_filters;
  if (!options.skip_workgroups) {
    MGD_ASSIGN_OR_RETURN(int8_filters, TuneInt8Filters(options.models, run, backend.backend, table));
  }
  const std::string text = tuning::SerializeTable(table);
  if (absl::Status s = WriteFileAtomically(options.out, text.data(), text.size()); !s.ok()) {
    return absl::Status(s.code(), "--out " + std::string(s.message()));
  }

  if (options.json) {
    nlohmann::json models = nlohmann::json::array();
    for (const ModelSummary& s : summaries) {
      nlohmann::json m = {{"model", s.model}, {"dispatches", s.dispatches}, {"tuned", s.tuned}, {"default_us", s.default_us},
                          {"tuned_us", s.tuned_us}, {"seconds", s.seconds}};
      if (s.guard) {
        m["accuracy"] = {{"model_digest", s.guard->model_digest}, {"budget", options.budget},
                         {"fp32_layers", s.guard->fp32_layers}, {"met", s.guard->met}, {"fp16_runs", s.guard->runs},
                         {"storage_bound", s.guard->storage_bound},
                         {"outputs_before", s.guard->outputs_before}, {"outputs_after", s.guard->outputs_after}};
      }
      models.push_back(m);
    }
    std::printf("%s\n", JsonText(nlohmann::json{{"backend", backend.backend}, {"device", backend.device}, {"precision", options.precision},
                                      {"table", options.out}, {"entries", table.entries.size()},
                                      {"accuracy_entries", table.accuracy.size()}, {"models", models},
                                      {"int8_filters", Int8FiltersJson(int8_filters)}, {"conv_settings", ConvSearchJson(conv)}}
                           ).c_str());
    return absl::OkStatus();
  }
  fmt::print("device   {} ({}), {}\n", backend.device, backend.backend, options.precision);
  const auto& tables = delegate.workgroup_tables();
  if (!conv && std::none_of(tables.begin(), tables.end(), [](const tuning::Table* t) { return tuning::SaysConvSettings(*t); })) {
    fmt::print("note     no table sets this GPU's convolution settings (blocks, split sums, gates), so the defaults ran; "
               "--conv-settings searches them (docs/tools.md)\n");
  }
  if (conv) {
    fmt::print("convolutions: {} ({:.2f} ms, median invokes summed over {} model(s)); before: {} ({:.2f} ms); "
               "{} settings timed\n",
               conv->best.ToString(), conv->best_ms, options.models.size(), conv->start.ToString(), conv->start_ms,
               conv->tried.size());
  }
  for (const ModelSummary& s : summaries) {
    if (s.guard) {
      const GuardResult& g = *s.guard;
      fmt::print("{}: accuracy guard ({} fp16 runs, outputs held to a relative RMS of {:g} of fp32): {}\n", s.model, g.runs,
                 options.budget, g.fp32_layers.empty() ? "no layer needs fp32" : fmt::format("fp32 layers {}", fmt::join(g.fp32_layers, ", ")));
      fmt::print("  outputs before: {}\n  outputs after:  {}{}\n", OutputsText(g.outputs_before), OutputsText(g.outputs_after),
                 g.met ? "" : "  (not met)");
      for (const auto& o : g.storage_bound) {
        fmt::print("  {}: fp16 storage alone gives {:.2g} (every layer in fp32), so it is held to 1.25x that\n",
                   o["name"].get<std::string>(), o["floor"].is_number() ? o["floor"].get<double>() : INFINITY);
      }
    }
    if (options.skip_workgroups) continue;
    const double gain = s.default_us > 0 ? 100.0 * (1.0 - s.tuned_us / s.default_us) : 0.0;
    fmt::print("{}: {} dispatches ({} newly tuned) in {:.1f} s; GPU time of those dispatches {:.1f} us with the default "
               "calculator, {:.1f} us tuned ({:+.1f}%)\n",
               s.model, s.dispatches, s.tuned, s.seconds, s.default_us, s.tuned_us, -gain);
  }
  if (int8_filters.models > 0) {
    const Int8FilterChoice& c = int8_filters;
    fmt::print("int8 filters: {:.2f} ms 8-bit, {}{:.2f} ms as floats (median invokes summed over {} model(s) with 8-bit "
               "filters): \"int8_filter_bits\" {}{} for {}\n",
               c.int8_ms, c.dot_ms ? fmt::format("{:.2f} ms 8-bit in dot products, ", *c.dot_ms) : "", c.float_ms,
               c.models, c.bits, c.dot_ms ? fmt::format(", \"int8_dot_products\" {}", c.dot) : "", options.precision);
  }
  fmt::print("table    {} ({} entries, {} accuracy entries)\n", options.out, table.entries.size(), table.accuracy.size());
  return absl::OkStatus();
}

}  // namespace mgd::cli
