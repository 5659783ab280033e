// The random-graph test's op makers (makers.cc): each picks its activation
// inputs among the values drawn so far, draws its parameters and constants,
// and adds one node, or returns false when nothing fits.
#pragma once

#include <vector>

#include "tests/delegate/random_graph/draw.h"

namespace mgd::random_graph {

struct Maker {
  const char* name;
  int weight;  // how often it is drawn, relative to the others
  bool (*make)(Draw&);
};

// The data movement makers (makers_movement.cc); the compute ones are
// makers.cc's own, but for the LSTMs.
bool MakeConcatenation(Draw& d);
bool MakeReshape(Draw& d);
bool MakeSqueezeOrExpandDims(Draw& d);
bool MakePad(Draw& d);
bool MakeMirrorPad(Draw& d);
bool MakePack(Draw& d);
bool MakeSplit(Draw& d);
bool MakeTile(Draw& d);
bool MakeGather(Draw& d);
bool MakeOneHot(Draw& d);
bool MakeSlice(Draw& d);
bool MakeStridedSlice(Draw& d);
bool MakeDepthToSpace(Draw& d);
bool MakeSpaceToDepth(Draw& d);
bool MakeResize(Draw& d);
bool MakeTranspose(Draw& d);
// LSTM and UNIDIRECTIONAL_SEQUENCE_LSTM (makers_lstm.cc).
bool MakeLstm(Draw& d);

// Every maker, and one drawn by weight.
const std::vector<Maker>& Makers();
const Maker& DrawMaker(Draw& d);

}  // namespace mgd::random_graph
