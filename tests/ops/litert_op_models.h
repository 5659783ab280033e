// Small single-op models of the ops issue 24 added, checked against LiteRT:
// scripts/litert-op-references writes them (write_litert_op_models), runs
// LiteRT on each and commits the model, its inputs and LiteRT's outputs to
// tests/data/litert_ops/NAME/; litert_ops_test runs mgd on them.
#pragma once

#include <string>
#include <vector>

#include "model/graph.h"

namespace mgd::testing {

struct LitertOpModel {
  std::string name;
  Graph graph;
  // LiteRT's --range for the generated float inputs (LO,HI).
  std::string range = "-1,1";
  // Whether it runs with the GPU delegate: the ops that step (FLOOR_DIV,
  // FLOOR_MOD), where one fp16 rounding of an input may cross a step, are
  // checked on the CPU only.
  bool gpu = true;
  // Whether every node then runs on the GPU (false: the int32 ones stay on
  // the CPU, the partitions around them on the GPU).
  bool all_on_gpu = true;
};

std::vector<LitertOpModel> LitertOpModels();

}  // namespace mgd::testing
