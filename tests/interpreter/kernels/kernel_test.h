// What every CPU kernel test file includes: gtest, the single-op runner
// (tests/interpreter/single_op.h), the naive references (reference.h), and
// their names in scope: the tests' vocabulary. Each test builds a one- or
// two-op graph, runs it through the Interpreter, and compares the outputs
// with values computed independently of the kernels: by hand for tiny cases
// (the arithmetic is in the comments), or by a naive loop in double written
// from TFLite's (or MediaPipe's) reference definition.
#pragma once

#include <gmock/gmock.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "interpreter/interpreter.h"
#include "model/fp16.h"
#include "tests/graph_builder.h"
#include "tests/interpreter/kernels/reference.h"
#include "tests/interpreter/single_op.h"

namespace mgd {

using mgd::testing::GraphBuilder;
using ::testing::HasSubstr;
using namespace mgd::testing::single_op;  // NOLINT(google-build-using-namespace)
using namespace mgd::testing::reference;  // NOLINT(google-build-using-namespace)

}  // namespace mgd
