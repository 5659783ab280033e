// libFuzzer target: any bytes through the model reader, the validator and
// the interpreter's prepare (shape checks, constant folding). Nothing may
// crash, hang or trip a sanitizer; errors are expected and fine.
#include <cstddef>
#include <cstdint>

#include "interpreter/interpreter.h"
#include "model/reader.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  auto graph = mgd::ReadModel(data, size, "fuzz");
  if (!graph.ok()) return 0;
  // Keep prepare bounded: skip graphs whose tensors alone would need > 64 MiB.
  int64_t bytes = 0;
  for (const mgd::Tensor& t : graph->tensors) bytes += mgd::NumElements(t.shape) * static_cast<int64_t>(mgd::ElementSize(t.type));
  if (bytes > (int64_t{64} << 20)) return 0;
  auto interpreter = mgd::Interpreter::Create(std::move(*graph), mgd::InterpreterOptions{});
  (void)interpreter;
  return 0;
}
