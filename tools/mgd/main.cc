// mgd: the command line. Subcommands follow docs/design.md section 4.
#include <CLI/CLI.hpp>
#include <cstdio>
#include <string>
#include <utility>

#include "delegate/build_id.h"
#include "tools/mgd/commands.h"

namespace {

int ExitCode(const absl::Status& status) {
  switch (status.code()) {
    case absl::StatusCode::kOk: return 0;
    case absl::StatusCode::kInvalidArgument:
    case absl::StatusCode::kNotFound:
    case absl::StatusCode::kPermissionDenied:
    case absl::StatusCode::kFailedPrecondition:
    case absl::StatusCode::kOutOfRange:
      return 2;
    default: return 1;
  }
}

}  // namespace

namespace {

// --backend and --precision, as every GPU command takes them.
void AddBackendOptions(CLI::App* cmd, std::string& backend, std::string& precision, const std::string& backend_help) {
  cmd->add_option("--backend", backend, backend_help)->check(CLI::IsMember({"auto", "vulkan", "gl", "cpu"}));
  cmd->add_option("--precision", precision, "fp32|fp16 (GPU backends)")->check(CLI::IsMember({"fp32", "fp16"}));
}

// fp16 arithmetic where mgd would compute in fp32, and the accuracy guard's
// layers given by hand.
void AddFp16Options(CLI::App* cmd, bool& fp16_arithmetic, std::vector<std::string>& fp32_layers, bool& table_guard) {
  cmd->add_flag("--fp16-arithmetic", fp16_arithmetic,
                "With --precision fp16: compute in fp16 (mediump) also where mgd would not (software GPUs, GLES), to see "
                "what a GPU with fp16 arithmetic computes (slow on software GPUs)");
  cmd->add_option("--fp32-layers", fp32_layers,
                  "With fp16 arithmetic: layers (named by an output tensor, comma-separated) that compute in fp32, "
                  "besides those the workgroup tables' accuracy entries list (mgd tune --accuracy)")
      ->delimiter(',');
  cmd->add_flag("!--no-accuracy-guard", table_guard,
                "Ignore the workgroup tables' accuracy entries: every layer in fp16 (but --fp32-layers)");
}

// TFLite's max_delegated_partitions, and partitioning by cost.
void AddPartitionOptions(CLI::App* cmd, int& max_partitions, bool& by_cost) {
  cmd->add_option("--max-partitions", max_partitions,
                  "Delegate at most N partitions, the largest; the rest of the graph runs on the CPU (default: any number)")
      ->check(CLI::Range(0, 1 << 20));
  cmd->add_flag("--partition-by-cost", by_cost,
                "Delegate a partition only where its expected GPU time and transfers are below its nodes' CPU time "
                "(rates measured on the device first)");
}

// The options that shape the compiled code (compile, and run and bench).
void AddCodeOptions(CLI::App* cmd, mgd::cli::RunOptions& run, const std::string& backend_help) {
  cmd->add_option("model", run.model, "Model (.tflite)")->required();
  AddBackendOptions(cmd, run.backend, run.precision, backend_help);
  cmd->add_option("--workgroups", run.workgroups, "Workgroup table (from mgd tune), ahead of the built-in one (GPU backends)");
  cmd->add_option("--memory-strategy", run.memory_strategy,
                  "How activations share GPU memory: naive|equality|greedy_in_order|greedy_by_breadth|greedy_by_size|"
                  "min_cost_flow|best (default), optionally :offsets or :shared_objects");
  cmd->add_flag("--no-fusion", run.no_fusion, "Disable operator fusion (GPU backends)");
  cmd->add_flag("--int8-integer", run.int8_integer,
                "Keep an int8 model's ops in integer arithmetic on the CPU instead of running them on the GPU as float "
                "ops that round as they do");
  cmd->add_option("--int8-filters", run.int8_filters,
                  "How an int8 model's filters are stored on the GPU: 8 (8-bit integers, scaled in the shader), dot "
                  "(8-bit, convolutions summed in integer dot products where the device has them), float (as the float "
                  "model's), or auto (what the device's table measured faster; default)")
      ->check(CLI::IsMember({"auto", "8", "dot", "float"}));
  cmd->add_flag("--share-programs", run.share_programs,
                "Let dispatches that differ only in sizes and constants share a program, reading those as parameters: "
                "fewer programs to compile, a little slower to run (GPU backends)");
  AddFp16Options(cmd, run.fp16_arithmetic, run.fp32_layers, run.table_guard);
  cmd->add_flag("--json", run.json, "Print one JSON object on stdout");
}

// The options `run` and `bench` share.
void AddRunOptions(CLI::App* cmd, mgd::cli::RunOptions& run) {
  AddCodeOptions(cmd, run, "auto|vulkan|gl|cpu");
  cmd->add_option("--input", run.inputs, "Input file, one per model input, in order: .npy of the input's dtype, or its raw bytes (size checked)");
  cmd->add_option("--cache-dir", run.cache_dir, "Compilation cache folder: the second start skips compiling (GPU backends)");
  AddPartitionOptions(cmd, run.max_partitions, run.partition_by_cost);
  cmd->add_flag("--check-finite", run.check_finite,
                "Fail, naming the tensor and element, when an input or an output holds NaN or Inf");
  cmd->add_flag("--recompile", run.recompile,
                "A model from mgd compile made for another GPU, driver, precision or options: compile it again "
                "instead of refusing it");
  cmd->add_option("--wait", run.wait,
                  "How an invoke waits for the GPU: active (polls for up to 2 ms, answering as soon as the GPU "
                  "finishes), passive (sleeps in the driver, waking later), or auto (active on a hardware GPU; "
                  "default)")
      ->check(CLI::IsMember({"auto", "passive", "active"}));
}

// After parsing: whether --backend / --precision were given (a compiled
// model otherwise runs as it was compiled).
void NoteGiven(CLI::App* cmd, mgd::cli::RunOptions& run) {
  run.backend_given = cmd->get_option("--backend")->count() > 0;
  run.precision_given = cmd->get_option("--precision")->count() > 0;
}

}  // namespace

int main(int argc, char** argv) {
  // The viewer parses its own options (mgd-view --help).
  if (argc >= 2 && std::string(argv[1]) == "view") return mgd::cli::ExecViewer(argc, argv);
  CLI::App app{"mgd: a mobile GPU delegate for TFLite models"};
  app.require_subcommand(1);
  app.set_version_flag("--version", std::string("mgd ") + mgd::BuildId());

  mgd::cli::RunOptions run;
  auto* run_cmd = app.add_subcommand("run", "Run a model once and write its outputs");
  AddRunOptions(run_cmd, run);
  run_cmd->add_option("--output-dir", run.output_dir, "Write output_<k>.npy here");
  run_cmd->add_option("--dump-tensors", run.dump_tensors,
                      "Write every tensor as DIR/<name>.npy with tensors.json (GPU: fusion off, no memory reuse)");

  mgd::cli::CompareOptions compare;
  auto* compare_cmd = app.add_subcommand("compare", "Compare two --dump-tensors folders tensor by tensor, in execution order");
  compare_cmd->add_option("a", compare.a, "Folder from mgd run --dump-tensors")->required();
  compare_cmd->add_option("b", compare.b, "The reference folder (e.g. from --backend cpu)")->required();
  compare_cmd->add_option("--threshold", compare.threshold, "Relative RMS above which a tensor diverges (default 1e-3)");
  compare_cmd->add_flag("--json", compare.json, "Print one JSON object on stdout");

  mgd::cli::CheckOptions check;
  auto* check_cmd = app.add_subcommand(
      "check", "Where fp16 goes wrong: the GPU's fp16 against its fp32, layer by layer, and the first layer past a threshold");
  check_cmd->add_option("model", check.model, "Model (.tflite)")->required();
  check_cmd->add_option("--backend", check.backend, "auto|vulkan|gl")->check(CLI::IsMember({"auto", "vulkan", "gl", "cpu"}));
  check_cmd->add_option("--input", check.inputs,
                        "Input file, one per model input, in order: .npy of the input's dtype, or its raw bytes (default: sin(0.01 i))");
  check_cmd->add_option("--threshold", check.threshold, "Relative RMS a layer may reach (default 1e-2, the fp16 bound)");
  check_cmd->add_option("--out", check.out, "Keep both runs' tensors here (DIR/fp32, DIR/fp16, as mgd run --dump-tensors)");
  check_cmd->add_option("--workgroups", check.workgroups,
                        "Workgroup table (from mgd tune): its accuracy entries keep layers in fp32 in the fp16 run");
  AddFp16Options(check_cmd, check.fp16_arithmetic, check.fp32_layers, check.table_guard);
  check_cmd->add_flag("--json", check.json, "Print one JSON object on stdout");

  mgd::cli::BenchOptions bench;
  auto* bench_cmd = app.add_subcommand("bench", "Prepare time, run latency percentiles and per-dispatch GPU times");
  AddRunOptions(bench_cmd, bench.run);
  bench_cmd->add_option("--warmup", bench.warmup, "Untimed runs first (default 10)");
  bench_cmd->add_option("--iterations", bench.iterations, "Timed runs (default 100)");
  bench_cmd->add_option("--in-flight", bench.in_flight,
                        "Also measure throughput (frames/s) with N async invokes in flight (InvokeAsync), beside one at a time");
  bench_cmd->add_option("--vs", bench.vs, "cpu: also time the CPU reference kernels and print the speed-up");
  bench_cmd->add_option("--trace", bench.trace, "Write a Chrome trace-event JSON timeline (opens in Perfetto)");

  mgd::cli::OpsOptions ops;
  auto* ops_cmd = app.add_subcommand("ops", "List every node: op, where it runs, and why");
  ops_cmd->add_option("model", ops.model, "Model (.tflite)")->required();
  ops_cmd->add_option("--backend", ops.backend, "auto|vulkan|gl|cpu")
      ->check(CLI::IsMember({"auto", "vulkan", "gl", "cpu"}));
  AddPartitionOptions(ops_cmd, ops.max_partitions, ops.partition_by_cost);
  ops_cmd->add_flag("--json", ops.json, "Print one JSON object on stdout");

  mgd::cli::PlanOptions plan;
  auto* plan_cmd = app.add_subcommand("plan", "Every memory strategy's bytes for the GPU partitions vs the lower bound");
  plan_cmd->add_option("model", plan.model, "Model (.tflite)")->required();
  AddBackendOptions(plan_cmd, plan.backend, plan.precision, "auto|vulkan|gl: whose alignment and limits to plan for");
  plan_cmd->add_flag("--no-fusion", plan.no_fusion, "Plan the unfused graph");
  plan_cmd->add_flag("--json", plan.json, "Print one JSON object on stdout");
  plan_cmd->add_option("--svg", plan.svg, "Draw the chosen plan into this SVG file");

  mgd::cli::DumpOptions dump;
  auto* dump_cmd = app.add_subcommand("dump", "Write every dispatch's shaders, SPIR-V, bindings, the fused graph and the memory plan");
  dump_cmd->add_option("model", dump.model, "Model (.tflite)")->required();
  dump_cmd->add_option("--out", dump.out, "Folder to write")->required();
  AddBackendOptions(dump_cmd, dump.backend, dump.precision, "auto|vulkan|gl");
  dump_cmd->add_flag("--no-fusion", dump.no_fusion, "One dispatch per node");
  dump_cmd->add_flag("--share-programs", dump.share_programs,
                     "Programs shared between dispatches that differ only in sizes and constants (as run's option)");

  mgd::cli::TuneOptions tune;
  auto* tune_cmd = app.add_subcommand("tune", "Measure workgroup sizes for each dispatch and write a workgroup table");
  tune_cmd->add_option("models", tune.models, "Models (.tflite)")->required();
  tune_cmd->add_option("--out", tune.out, "Table to write (merged into when it exists)")->required();
  AddBackendOptions(tune_cmd, tune.backend, tune.precision, "auto|vulkan|gl");
  tune_cmd->add_option("--max-candidates", tune.max_candidates, "Workgroups tried per dispatch at most (default 24)");
  tune_cmd->add_flag("--skip-workgroups", tune.skip_workgroups,
                     "Time no workgroups (with --accuracy or --conv-settings: only those)");
  tune_cmd->add_flag("--conv-settings", tune.conv_settings,
                     "First search the convolutions' blocks and split sums (the table's conv_block_x, conv_block_slices, "
                     "conv_block_flat, split_conv_outputs, split_fused_sums, gate_invocations), timing the models end to end");
  tune_cmd->add_flag("--accuracy", tune.accuracy,
                     "The fp16 accuracy guard: find the layers whose fp16 arithmetic breaks an output's budget on the "
                     "--input (fp16 against the GPU's fp32) and list them in the table, to compute in fp32");
  tune_cmd->add_option("--input", tune.inputs,
                       "With --accuracy and one model: its representative input files, one per model input (default: "
                       "sin(0.01 i))");
  tune_cmd->add_option("--budget", tune.budget, "With --accuracy: the relative RMS every output is held to (default 5e-3, "
                                                "half the fp16 bound, a margin for other inputs)");
  tune_cmd->add_flag("--fp16-arithmetic", tune.fp16_arithmetic,
                     "Compute in fp16 also where mgd would not (software GPUs, GLES), as run's option");
  tune_cmd->add_flag("--json", tune.json, "Print one JSON object on stdout");

  mgd::cli::ModelgenOptions gen;
  auto* gen_cmd = app.add_subcommand("modelgen", "Write a standard architecture with deterministic weights");
  gen_cmd->add_option("name", gen.name, "mobilenet_v1 | mobilenet_v2 | bert_tiny (int32 token ids in) | vit_tiny | efficientnet_lite0 | yolo_nano | mobilevit_xxs | lstm_kws | lstm_kws_unrolled (its LSTMs as plain ops per frame) | fp16_trap (a planted fp16-hostile layer, for mgd check) | fp16_sum_trap "
                      "(a head whose fp16 sums cancel, for mgd tune --accuracy)")->required();
  gen_cmd->add_option("--out", gen.out, "Output .tflite")->required();
  gen_cmd->add_option("--seed", gen.seed, "Weight seed");
  gen_cmd->add_flag("--fp16-weights", gen.fp16_weights, "Store weights as fp16 behind DEQUANTIZE (as MediaPipe does)");
  gen_cmd->add_flag("--int8", gen.int8,
                    "Quantize the model to int8 as mgd quantize does, calibrated on random inputs in [-1, 1] "
                    "(float input and outputs)");

  mgd::cli::QuantizeOptions quant;
  auto* quant_cmd = app.add_subcommand("quantize", "Post-training int8 quantization of a float model, calibrated on images");
  quant_cmd->add_option("model", quant.model, "Float model (.tflite)")->required();
  quant_cmd->add_option("--out", quant.out, "Output .tflite")->required();
  quant_cmd->add_option("--calibration", quant.calibration,
                        "PNG or JPEG images, resized to the model's [1,H,W,3] input and scaled to --input-range");
  quant_cmd->add_option("--random-samples", quant.random_samples,
                        "Calibrate on this many random inputs in --input-range instead of images")
      ->check(CLI::Range(1, 10000));
  quant_cmd->add_option_function<std::string>(
      "--input-range",
      [&quant](const std::string& v) {
        if (std::sscanf(v.c_str(), "%f,%f", &quant.range_lo, &quant.range_hi) != 2) {
          throw CLI::ValidationError("--input-range", "expected LO,HI, e.g. -1,1 or 0,1");
        }
      },
      "The model's input range LO,HI: what pixel values 0 and 255 become (default -1,1)");
  quant_cmd->add_option("--percentile", quant.percentile,
                        "Keep this percentage of each activation's calibration values in its range, cutting outliers "
                        "(default 100: the minimum and maximum)")
      ->check(CLI::Range(50.0, 100.0));
  quant_cmd->add_flag("--per-tensor", quant.per_tensor, "One scale per filter instead of one per output channel");
  quant_cmd->add_flag("--dynamic-range", quant.dynamic_range,
                      "Only the weights int8 (behind DEQUANTIZE): float activations and arithmetic");
  quant_cmd->add_flag("--int8-io", quant.int8_io, "int8 model inputs and outputs (default: float, as the converter)");
  quant_cmd->add_flag("--json", quant.json, "Print one JSON object on stdout");

  mgd::cli::PipelineOptions pipe;
  app.add_subcommand("view", "A live window: frames through a solution or a model, results drawn (mgd view --help)")
      ->allow_extras();
  auto* pipe_cmd = app.add_subcommand("pipeline", "A MediaPipe solution end to end: image in, detections in image pixels out");
  pipe_cmd->add_option("solution", pipe.solution, "face | face_full_range | face_mesh | hands | pose | selfie")->required();
  pipe_cmd->add_option("images", pipe.images, "PNG or JPEG images")->required();
  pipe_cmd->add_option("--models", pipe.models_dir, "Folder of the solution's .tflite models (default tests/data/models)");
  AddBackendOptions(pipe_cmd, pipe.backend, pipe.precision, "auto|vulkan|gl|cpu");
  pipe_cmd->add_option("--cache-dir", pipe.cache_dir, "Compilation cache folder");
  pipe_cmd->add_option("--out", pipe.out, "Annotated picture to write (PNG; with several images, OUT_<k>.png)");
  pipe_cmd->add_option("--repeat", pipe.repeat,
                       "Process each image N times in a row, as frames of a still scene (tracking), and report the "
                       "per-frame times")
      ->check(CLI::Range(1, 100000));
  pipe_cmd->add_option("--save-graphs", pipe.save_graphs,
                       "Write the stages' graphs for the first image's size as DIR/SOLUTION_STAGE.tflite (to bench, dump "
                       "or inspect them as models)");
  pipe_cmd->add_flag("--json", pipe.json, "Print one JSON object on stdout");

  mgd::cli::CompileFileOptions compile;
  auto* compile_cmd = app.add_subcommand(
      "compile", "Prepare a model for this GPU and write it with the result: it later loads without compiling");
  AddCodeOptions(compile_cmd, compile.run, "auto|vulkan|gl");
  compile_cmd->add_option("--out", compile.out, "Compiled model to write (a .tflite with mgd's code inside)")->required();

  mgd::cli::InfoOptions info;
  auto* info_cmd = app.add_subcommand("info", "GPUs, drivers, limits and features per backend");
  info_cmd->add_flag("--json", info.json, "Print one JSON object on stdout");
  info_cmd->add_flag("--clamp-limits", info.clamp_limits, "Show the GLES 3.1 minimum limits mgd can test against");
  info_cmd->add_flag("!--no-measure", info.measure,
                     "Skip measuring each device on the reference workload (fp32 and fp16 times, GFLOP/s)");

  // CLI11 reads an unknown first word as a stray argument and only says "A
  // subcommand is required".
  if (argc >= 2 && argv[1][0] != '-') {
    std::string list;
    bool known = false;
    for (const CLI::App* sub : std::as_const(app).get_subcommands([](const CLI::App*) { return true; })) {
      known = known || sub->get_name() == argv[1];
      list += (list.empty() ? "" : ", ") + sub->get_name();
    }
    if (!known) {
      std::fprintf(stderr, "mgd: unknown command '%s' (the commands are %s; mgd --help says more)\n", argv[1], list.c_str());
      return 2;
    }
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    std::fprintf(stderr, "mgd: %s\n", e.what());
    return 2;
  }

  NoteGiven(run_cmd, run);
  NoteGiven(bench_cmd, bench.run);
  absl::Status status;
  // No subcommand should throw; one that does (out of memory, say) still
  // ends with one line and an exit code, not an abort.
  try {
    if (run_cmd->parsed()) status = mgd::cli::Run(run);
    else if (bench_cmd->parsed()) status = mgd::cli::Bench(bench);
    else if (ops_cmd->parsed()) status = mgd::cli::Ops(ops);
    else if (plan_cmd->parsed()) status = mgd::cli::Plan(plan);
    else if (tune_cmd->parsed()) status = mgd::cli::Tune(tune);
    else if (dump_cmd->parsed()) status = mgd::cli::Dump(dump);
    else if (compare_cmd->parsed()) status = mgd::cli::Compare(compare);
    else if (check_cmd->parsed()) status = mgd::cli::Check(check);
    else if (gen_cmd->parsed()) status = mgd::cli::Modelgen(gen);
    else if (quant_cmd->parsed()) status = mgd::cli::Quantize(quant);
    else if (info_cmd->parsed()) status = mgd::cli::Info(info);
    else if (compile_cmd->parsed()) status = mgd::cli::Compile(compile);
    else if (pipe_cmd->parsed()) status = mgd::cli::Pipeline(pipe);
  } catch (const std::exception& e) {
    status = absl::InternalError(std::string("unexpected failure: ") + e.what());
  }
  if (!status.ok()) {
    std::fprintf(stderr, "mgd: error: %s\n", std::string(status.message()).c_str());
  }
  return ExitCode(status);
}
