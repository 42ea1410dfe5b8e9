// What differs between the LibTorch versions the worker builds against, in one place:
// Debian's libtorch-dev (1.13, CPU-only) and PyTorch's LibTorch (2.x, with CUDA when
// PGMATE_TORCH_CUDA is defined by CMake).
#pragma once

#include <string>

#include <torch/torch.h>
#include <torch/version.h>
#include <ATen/detail/CUDAHooksInterface.h>

#if PGMATE_TORCH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>
#endif

namespace pgmate::worker::torch_compat {

inline std::string version() {
  return std::to_string(TORCH_VERSION_MAJOR) + "." + std::to_string(TORCH_VERSION_MINOR) + "." +
         std::to_string(TORCH_VERSION_PATCH);
}

// TF32 in cuDNN convolutions and cuBLAS matrix products (PyTorch allows it in convolutions
// by default). fp32 inference turns it off, so that CUDA agrees with the CPU to ~1e-5.
inline void allow_tf32(bool allowed) {
  at::globalContext().setAllowTF32CuDNN(allowed);
  at::globalContext().setAllowTF32CuBLAS(allowed);
}

#if PGMATE_TORCH_CUDA
// Network batches run on a high-priority stream of the calling thread, never on the legacy
// default stream that device-wide synchronisation would stall (GPU perft has its own
// low-priority stream).
class StreamScope {
 public:
  explicit StreamScope(const torch::Device& device)
      : guard_(device.is_cuda() ? std::optional<c10::cuda::CUDAStreamGuard>(stream_of_thread(device))
                                : std::nullopt) {}

 private:
  static c10::cuda::CUDAStream stream_of_thread(const torch::Device& device) {
    thread_local std::optional<c10::cuda::CUDAStream> stream;
    if (!stream) stream = c10::cuda::getStreamFromPool(/*isHighPriority=*/true, device.index());
    return *stream;
  }
  std::optional<c10::cuda::CUDAStreamGuard> guard_;
};

// After a failed CUDA operation: whether the context is dead. A sticky error (illegal
// address, launch failure, ...) is returned by every later call, so it survives clearing
// the last error; an ordinary one (out of memory, say) does not.
inline bool cuda_context_lost(std::string* what) {
  const cudaError_t first = cudaStreamSynchronize(c10::cuda::getCurrentCUDAStream());
  (void)cudaGetLastError();
  const cudaError_t again = cudaStreamQuery(c10::cuda::getCurrentCUDAStream());
  if (first == cudaSuccess || again == cudaSuccess || again == cudaErrorNotReady) return false;
  if (what) *what = cudaGetErrorString(again);
  return true;
}

// CUDA, cuDNN and driver versions, for the worker's status.
inline std::string cuda_versions() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  const auto v = [](int x) { return std::to_string(x / 1000) + "." + std::to_string(x % 1000 / 10); };
  return "CUDA runtime " + v(runtime) + ", driver " + v(driver) + ", cuDNN " +
         std::to_string(at::detail::getCUDAHooks().versionCuDNN());
}
#else
class StreamScope {
 public:
  explicit StreamScope(const torch::Device&) {}
};
inline std::string cuda_versions() { return "no CUDA"; }
inline bool cuda_context_lost(std::string*) { return false; }
#endif

}  // namespace pgmate::worker::torch_compat
