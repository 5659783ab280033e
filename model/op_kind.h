// Operator kinds of the Graph IR. The numbers are TFLite's builtin operator
// codes, so a code read from a model maps to a kind without a table and an
// unknown code can still be named in an error message.
#pragma once

#include <cstdint>
#include <string>

namespace mgd {

enum class OpKind : int32_t {
  kAdd = 0,
  kAveragePool2d = 1,
  kConcatenation = 2,
  kConv2d = 3,
  kDepthwiseConv2d = 4,
  kDepthToSpace = 5,
  kDequantize = 6,
  kFloor = 8,
  kFullyConnected = 9,
  kLogistic = 14,
  kLstm = 16,
  kMaxPool2d = 17,
  kMul = 18,
  kRelu = 19,
  kReluN1To1 = 20,
  kRelu6 = 21,
  kReshape = 22,
  kResizeBilinear = 23,
  kSoftmax = 25,
  kSpaceToDepth = 26,
  kTanh = 28,
  kCustom = 32,
  kPad = 34,
  kGather = 36,
  kTranspose = 39,
  kMean = 40,
  kSub = 41,
  kDiv = 42,
  kSqueeze = 43,
  kUnidirectionalSequenceLstm = 44,
  kStridedSlice = 45,
  kExp = 47,
  kSplit = 49,
  kCast = 53,
  kPrelu = 54,
  kMaximum = 55,
  kMinimum = 57,
  kLess = 58,
  kNeg = 59,
  kGreater = 61,
  kGreaterEqual = 62,
  kLessEqual = 63,
  kSlice = 65,
  kSin = 66,
  kTransposeConv = 67,
  kTile = 69,
  kExpandDims = 70,
  kEqual = 71,
  kNotEqual = 72,
  kLog = 73,
  kSum = 74,
  kSqrt = 75,
  kRsqrt = 76,
  kPow = 78,
  kFakeQuant = 80,
  kReduceProd = 81,
  kReduceMax = 82,
  kPack = 83,
  kOneHot = 85,
  kReduceMin = 89,
  kFloorDiv = 90,
  kSquare = 92,
  kFloorMod = 95,
  kResizeNearestNeighbor = 97,
  kLeakyRelu = 98,
  kSquaredDifference = 99,
  kMirrorPad = 100,
  kAbs = 101,
  kSplitV = 102,
  kCeil = 104,
  kCos = 108,
  kElu = 111,
  kQuantize = 114,
  kHardSwish = 117,
  kSelectV2 = 123,
  kDensify = 124,
  kBatchMatmul = 126,
  kCumsum = 128,
  kGelu = 150,
  kSign = 158,
};

// TFLite's name for a builtin code ("CONV_2D"), also for codes mgd does not
// implement; "BUILTIN_<n>" for codes it does not know at all.
std::string BuiltinName(int32_t code);

inline std::string OpName(OpKind kind) { return BuiltinName(static_cast<int32_t>(kind)); }

}  // namespace mgd
