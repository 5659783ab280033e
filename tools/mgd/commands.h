// The mgd subcommands. Each returns a Status; main maps it to an exit code
// (2: usage, bad model, bad input; 1: runtime failure) and one stderr line.
#pragma once

#include <string>
#include <vector>

#include "absl/status/status.h"

namespace mgd {
struct Node;
struct TensorRef;
}

namespace mgd::cli {

struct RunOptions {
  std::string model;
  std::string backend = "auto";
  std::string precision = "fp32";
  std::vector<std::string> inputs;
  std::string output_dir;
  std::string cache_dir;
  std::string workgroups;
  std::string memory_strategy;
  bool no_fusion = false;
  std::string int8_filters = "auto";  // auto|8|float: GpuDelegateOptions::int8_filters
  bool int8_integer = false;  // an int8 model's ops stay integer, on the CPU (GpuDelegateOptions::int8_as_float off)
  bool share_programs = false;
  std::string wait = "auto";             // GpuDelegateOptions::wait: auto|passive|active
  bool fp16_arithmetic = false;          // GpuDelegateOptions::keep_fp16_arithmetic
  std::vector<std::string> fp32_layers;  // GpuDelegateOptions::fp32_layers
  bool table_guard = true;               // GpuDelegateOptions::table_guard (--no-accuracy-guard)
  bool json = false;
  std::string dump_tensors;  // a folder: every tensor as .npy (run only)
  bool recompile = false;    // an offline compiled model made for another GPU: compile it again
  bool check_finite = false;  // fail naming the first NaN/Inf input or output
  int max_partitions = 0;     // delegated partitions at most, the largest kept (0: any number)
  bool partition_by_cost = false;  // InterpreterOptions::partition_by_cost
  // Whether --backend / --precision were given: an offline compiled model
  // otherwise runs as it was compiled.
  bool backend_given = false, precision_given = false;
};
absl::Status Run(const RunOptions& options);

// mgd pipeline: a solution (pipeline/solutions.h) on images.
struct PipelineOptions {
  std::string solution;
  std::vector<std::string> images;
  std::string models_dir = "tests/data/models";
  std::string backend = "auto";
  std::string precision = "fp32";
  std::string cache_dir;
  std::string out;  // annotated picture (PNG)
  int repeat = 1;    // each image this many times in a row (frames of a still scene): timing
  std::string save_graphs;  // a folder: the stages' graphs as .tflite (for mgd bench, dump, ops)
  bool json = false;
};
absl::Status Pipeline(const PipelineOptions& options);

// mgd view ARGS: runs mgd-view (tools/view) with ARGS, in this process's
// place; returns an exit code only when it cannot.
int ExecViewer(int argc, char** argv);

// mgd compile: run's options (backend, precision, memory strategy, fusion,
// workgroups) and where to write the compiled model.
struct CompileFileOptions {
  RunOptions run;
  std::string out;
};
absl::Status Compile(const CompileFileOptions& options);

struct CompareOptions {
  std::string a, b;
  double threshold = 1e-3;
  bool json = false;
};
absl::Status Compare(const CompareOptions& options);

// mgd check: fp16 against fp32 on the GPU, layer by layer.
struct CheckOptions {
  std::string model;
  std::string backend = "auto";
  std::vector<std::string> inputs;  // none: a generated input
  double threshold = 1e-2;          // relative RMS; DESIGN.md's fp16 bound per output
  std::string out;                  // keep both dumps here
  bool fp16_arithmetic = false;     // as run's
  std::vector<std::string> fp32_layers;
  bool table_guard = true;
  std::string workgroups;           // a table whose accuracy entries apply
  bool json = false;
};
absl::Status Check(const CheckOptions& options);

struct OpsOptions {
  std::string model;
  std::string backend = "auto";
  int max_partitions = 0;
  bool partition_by_cost = false;
  bool json = false;
};
absl::Status Ops(const OpsOptions& options);

struct PlanOptions {
  std::string model;
  std::string backend = "auto";
  std::string precision = "fp32";
  bool no_fusion = false;
  bool json = false;
  std::string svg;
};
absl::Status Plan(const PlanOptions& options);

struct DumpOptions {
  std::string model;
  std::string out;
  std::string backend = "auto";
  std::string precision = "fp32";
  bool no_fusion = false;
  bool share_programs = false;
};
absl::Status Dump(const DumpOptions& options);

struct TuneOptions {
  std::vector<std::string> models;
  std::string out;
  std::string backend = "auto";
  std::string precision = "fp32";
  int max_candidates = 24;
  bool skip_workgroups = false;
  // Search the table's convolution settings first (tools/mgd/tune_conv_settings.h).
  bool conv_settings = false;
  // The accuracy guard (tools/mgd/accuracy_guard.h): fp16 against fp32 on
  // `inputs` (none: generated), every output held to `budget`.
  bool accuracy = false;
  std::vector<std::string> inputs;
  double budget = 5e-3;
  bool fp16_arithmetic = false;
  bool json = false;
};
absl::Status Tune(const TuneOptions& options);

struct ModelgenOptions {
  std::string name;
  std::string out;
  uint64_t seed = 1;
  bool fp16_weights = false;
  bool int8 = false;  // full-integer int8, calibrated on random inputs (quantizer/)
};
absl::Status Modelgen(const ModelgenOptions& options);

// mgd quantize: post-training int8 quantization (quantizer/).
struct QuantizeOptions {
  std::string model;
  std::string out;
  std::vector<std::string> calibration;  // images, resized and scaled to the input
  int random_samples = 0;                // or this many random inputs
  float range_lo = -1.0f, range_hi = 1.0f;  // the model's input range
  double percentile = 100.0;
  bool per_tensor = false;
  bool dynamic_range = false;
  bool int8_io = false;
  bool json = false;
};
absl::Status Quantize(const QuantizeOptions& options);

struct InfoOptions {
  bool json = false;
  bool clamp_limits = false;
  bool measure = true;  // run the reference workload on each device (capabilities)
};
absl::Status Info(const InfoOptions& options);

struct BenchOptions {
  RunOptions run;
  int warmup = 10;
  int iterations = 100;
  int in_flight = 0;  // > 0: also async throughput with this many invokes in flight
  std::string trace;
  std::string vs;
};
absl::Status Bench(const BenchOptions& options);

// Fills `tensor` (model input `index`) from a .npy or raw .f32 file; a size
// or shape mismatch is an InvalidArgument naming both.
absl::Status FeedInput(TensorRef& tensor, size_t index, const std::string& path);

// A node's op as the CLI shows it: "CONV_2D", or "CUSTOM:<name>".
std::string OpLabel(const Node& node);

// `name` with every character but letters, digits, '_', '-' and '.' made '_'.
std::string SafeFileName(const std::string& name);

// A usage error (exit code 2) with `message`.
absl::Status UsageError(const std::string& message);

// `status` with "MODEL: " in front, for errors found after the model was read.
absl::Status WithModelPath(const std::string& model, const absl::Status& status);

}  // namespace mgd::cli
