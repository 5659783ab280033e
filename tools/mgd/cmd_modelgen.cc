// mgd modelgen: write a standard architecture with deterministic weights.
#include <fmt/format.h>

#include <utility>

#include "model/status_macros.h"
#include "model/writer.h"
#include "tools/mgd/commands.h"
#include "tools/mgd/modelgen.h"

namespace mgd::cli {

absl::Status Modelgen(const ModelgenOptions& options) {
  if (options.int8 && options.name != "mobilenet_v1" && options.name != "mobilenet_v2") {
    return UsageError("modelgen: --int8 is for mobilenet_v1 and mobilenet_v2 (mgd quantize makes any model int8)");
  }
  if (options.name == "fp16_trap") {
    MGD_ASSIGN_OR_RETURN(Graph trap, BuildFp16Trap(options.seed));
    return WriteModelFile(trap, options.out);
  }
  if (options.name == "fp16_sum_trap") {
    MGD_ASSIGN_OR_RETURN(Graph trap, BuildFp16SumTrap(options.seed));
    return WriteModelFile(trap, options.out);
  }
  // The families of issue 24's model zoo, each by its builder.
  const std::pair<const char*, absl::StatusOr<Graph> (*)(uint64_t)> families[] = {
      {"bert_tiny", BuildBertTiny}, {"vit_tiny", BuildVitTiny}, {"efficientnet_lite0", BuildEfficientNetLite0},
      {"yolo_nano", BuildYoloNano}, {"mobilevit_xxs", BuildMobileVitXxs}, {"lstm_kws", BuildLstmKws},
      {"lstm_kws_unrolled", BuildLstmKwsUnrolled}};
  for (const auto& [name, build] : families) {
    if (options.name != name) continue;
    MGD_ASSIGN_OR_RETURN(Graph graph, build(options.seed));
    return WriteModelFile(graph, options.out);
  }
  int version = 0;
  if (options.name == "mobilenet_v1") version = 1;
  else if (options.name == "mobilenet_v2") version = 2;
  else return UsageError(fmt::format("modelgen: unknown model '{}' (valid: mobilenet_v1, mobilenet_v2, bert_tiny, vit_tiny, efficientnet_lite0, yolo_nano, mobilevit_xxs, lstm_kws, lstm_kws_unrolled, fp16_trap, fp16_sum_trap)", options.name));
  MGD_ASSIGN_OR_RETURN(Graph graph, BuildMobileNet(version, options.seed, options.fp16_weights));
  if (options.int8) {
    MGD_ASSIGN_OR_RETURN(graph, QuantizedMobileNet(graph, options.seed));
  }
  // WriteModelFile reports an unwritable path as PermissionDenied, naming it.
  return WriteModelFile(graph, options.out);
}

}  // namespace mgd::cli
