// Writes the models of litert_op_models.cc as DIR/NAME.tflite and prints
// "NAME RANGE" per model, for scripts/litert-op-references.
#include <cstdio>

#include "model/writer.h"
#include "tests/ops/litert_op_models.h"

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: write_litert_op_models DIR\n");
    return 2;
  }
  for (const mgd::testing::LitertOpModel& m : mgd::testing::LitertOpModels()) {
    const std::string path = std::string(argv[1]) + "/" + m.name + ".tflite";
    if (absl::Status s = mgd::WriteModelFile(m.graph, path); !s.ok()) {
      std::fprintf(stderr, "%s: %s\n", path.c_str(), std::string(s.message()).c_str());
      return 1;
    }
    std::printf("%s %s\n", m.name.c_str(), m.range.c_str());
  }
  return 0;
}
