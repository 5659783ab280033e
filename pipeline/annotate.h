// A picture of what a pipeline found, for people: boxes, keypoints and landmarks drawn
// over a copy of the image (RGB).
#pragma once

#include "pipeline/image.h"
#include "pipeline/pipeline.h"

namespace mgd::pipeline {

Image Annotate(const Image& image, const Result& result);

}  // namespace mgd::pipeline
