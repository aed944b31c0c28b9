// The one image of hipshadow's kernels, per vendor: every kernel source, compiled together.
#include "transpose.hip"
#include "redzones.hip"
