// Holds GPU memory for the GPU memory test: allocates MIB MiB on device 0 with cudaMalloc, writes
// it, prints "ready" and sleeps until it is stopped (at most SECONDS). Built only where nvcc is:
//   nvcc -o gpu_hold tests/measure/gpu_hold.cu && KVBENCH_GPU_HOLDER=$PWD/gpu_hold test_measure
#include <cuda_runtime.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

int main(int argc, char** argv) {
  const size_t mib = argc > 1 ? std::strtoull(argv[1], nullptr, 10) : 1024;
  const unsigned seconds = argc > 2 ? static_cast<unsigned>(std::atoi(argv[2])) : 120;
  void* block = nullptr;
  if (cudaMalloc(&block, mib << 20) != cudaSuccess || cudaMemset(block, 1, mib << 20) != cudaSuccess ||
      cudaDeviceSynchronize() != cudaSuccess) {
    std::fprintf(stderr, "gpu_hold: could not hold %zu MiB\n", mib);
    return 1;
  }
  std::printf("ready %zu MiB\n", mib);
  std::fflush(stdout);
  sleep(seconds);
  cudaFree(block);
  return 0;
}
