// One translation unit of the fake CUDA libraries the native readers are
// tested on (tests/native/CMakeLists.txt compiles it once per unit, with the
// targets that unit is to carry).  UNIT makes each unit's names distinct.
#ifndef UNIT
#define UNIT 0
#endif
#define JOIN2(a, b) a##b
#define JOIN(a, b) JOIN2(a, b)

__global__ void JOIN(add_one_, UNIT)(float* x) { x[threadIdx.x] += 1.0f; }

void JOIN(launch_add_one_, UNIT)(float* x) { JOIN(add_one_, UNIT)<<<1, 32>>>(x); }
