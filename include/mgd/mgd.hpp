// mgd C++ API: the interpreter, its options, custom ops and the delegate
// interface, as C++ types. Errors are absl::Status values whose messages name
// the file, node, tensor or field at fault.
//
//   auto graph = mgd::ReadModelFile("model.tflite");
//   mgd::InterpreterOptions options;               // MediaPipe custom ops included
//   options.resolver.AddCustom("MyOp", factory);   // add or override custom ops
//   options.delegates.push_back(&my_delegate);     // optional
//   auto interpreter = mgd::Interpreter::Create(*std::move(graph), std::move(options));
//   std::memcpy((*interpreter)->input(0).data, pixels, (*interpreter)->input(0).bytes);
//   (*interpreter)->Invoke();
#pragma once

#include "interpreter/delegate.h"
#include "interpreter/interpreter.h"
#include "interpreter/kernel.h"
#include "interpreter/op_resolver.h"
#include "model/graph.h"
#include "model/reader.h"
#include "model/writer.h"
#include "pipeline/pipeline.h"
