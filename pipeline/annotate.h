// A picture of what a pipeline found, for people: a mask as a translucent
// tint, boxes, keypoints, landmarks and the solution's connections between
// them drawn over a copy of the image (RGB).
#pragma once

#include "pipeline/image.h"
#include "pipeline/pipeline.h"

namespace mgd::pipeline {

Image Annotate(const Image& image, const Result& result, const SolutionSpec& spec);

}  // namespace mgd::pipeline
