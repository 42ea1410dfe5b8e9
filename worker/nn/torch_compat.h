// What differs between the LibTorch versions the worker builds against, in one place:
// Debian's libtorch-dev (1.13, CPU-only) and PyTorch's LibTorch (2.x, with CUDA when
// PGMATE_TORCH_CUDA is defined by CMake).
#pragma once

#include <cstdint>
#include <optional>
#include <stdexcept>
#include <string>

#include <torch/torch.h>
#include <torch/version.h>
#include <ATen/CPUGeneratorImpl.h>
#include <ATen/autocast_mode.h>
#include <ATen/detail/CUDAHooksInterface.h>

#if PGMATE_TORCH_CUDA
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <ATen/cuda/CUDAGeneratorImpl.h>
#include <ATen/cuda/CUDAGraph.h>
#include <cuda_runtime_api.h>
#endif

// LibTorch 2.4 replaced the CUDA-only autocast calls (set_enabled, set_autocast_gpu_dtype)
// by per-device ones; the old ones are deprecated there.
#define PGMATE_TORCH_AUTOCAST_PER_DEVICE (TORCH_VERSION_MAJOR > 2 || (TORCH_VERSION_MAJOR == 2 && TORCH_VERSION_MINOR >= 4))

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

// bf16 autocast on CUDA for the scope's lifetime (the calling thread's state; restored on
// exit). Disabled: does nothing.
class CudaAutocastScope {
 public:
  explicit CudaAutocastScope(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
#if PGMATE_TORCH_AUTOCAST_PER_DEVICE
    was_enabled_ = at::autocast::is_autocast_enabled(at::kCUDA);
    previous_dtype_ = at::autocast::get_autocast_dtype(at::kCUDA);
    at::autocast::set_autocast_dtype(at::kCUDA, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCUDA, true);
#else
    was_enabled_ = at::autocast::is_enabled();
    previous_dtype_ = at::autocast::get_autocast_gpu_dtype();
    at::autocast::set_autocast_gpu_dtype(at::kBFloat16);
    at::autocast::set_enabled(true);
#endif
    at::autocast::increment_nesting();
  }
  ~CudaAutocastScope() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();  // the cast weights
#if PGMATE_TORCH_AUTOCAST_PER_DEVICE
    at::autocast::set_autocast_enabled(at::kCUDA, was_enabled_);
    at::autocast::set_autocast_dtype(at::kCUDA, previous_dtype_);
#else
    at::autocast::set_enabled(was_enabled_);
    at::autocast::set_autocast_gpu_dtype(previous_dtype_);
#endif
  }
  CudaAutocastScope(const CudaAutocastScope&) = delete;
  CudaAutocastScope& operator=(const CudaAutocastScope&) = delete;

 private:
  bool enabled_;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

// bf16 autocast on the CPU (oneDNN's bf16 convolutions and matrix products where the CPU has
// them, fp32 master weights), the same way.
class CpuAutocastScope {
 public:
  explicit CpuAutocastScope(bool enabled) : enabled_(enabled) {
    if (!enabled_) return;
#if PGMATE_TORCH_AUTOCAST_PER_DEVICE
    was_enabled_ = at::autocast::is_autocast_enabled(at::kCPU);
    previous_dtype_ = at::autocast::get_autocast_dtype(at::kCPU);
    at::autocast::set_autocast_dtype(at::kCPU, at::kBFloat16);
    at::autocast::set_autocast_enabled(at::kCPU, true);
#else
    was_enabled_ = at::autocast::is_cpu_enabled();
    previous_dtype_ = at::autocast::get_autocast_cpu_dtype();
    at::autocast::set_autocast_cpu_dtype(at::kBFloat16);
    at::autocast::set_cpu_enabled(true);
#endif
    at::autocast::increment_nesting();
  }
  ~CpuAutocastScope() {
    if (!enabled_) return;
    if (at::autocast::decrement_nesting() == 0) at::autocast::clear_cache();
#if PGMATE_TORCH_AUTOCAST_PER_DEVICE
    at::autocast::set_autocast_enabled(at::kCPU, was_enabled_);
    at::autocast::set_autocast_dtype(at::kCPU, previous_dtype_);
#else
    at::autocast::set_cpu_enabled(was_enabled_);
    at::autocast::set_autocast_cpu_dtype(previous_dtype_);
#endif
  }
  CpuAutocastScope(const CpuAutocastScope&) = delete;
  CpuAutocastScope& operator=(const CpuAutocastScope&) = delete;

 private:
  bool enabled_;
  bool was_enabled_ = false;
  at::ScalarType previous_dtype_ = at::kBFloat16;
};

// A random generator of its own on `device`, seeded: what a reproducible computation draws
// from instead of the process-wide default generator.
inline at::Generator make_generator(const torch::Device& device, std::uint64_t seed) {
#if PGMATE_TORCH_CUDA
  if (device.is_cuda()) {
    at::Generator generator = at::cuda::detail::createCUDAGenerator(device.index());
    generator.set_current_seed(seed);
    return generator;
  }
#endif
  if (!device.is_cpu()) throw std::invalid_argument("no random generator for device " + device.str());
  return at::detail::createCPUGenerator(seed);
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

// The calling thread's current CUDA stream on `device` (a cudaStream_t), for kernels of
// pgmate's own that run between LibTorch's operations.
inline void* current_stream(const torch::Device& device) {
  return c10::cuda::getCurrentCUDAStream(device.index()).stream();
}

// Waits for the calling thread's current stream on `device`.
inline void synchronize(const torch::Device& device) {
  const cudaError_t e = cudaStreamSynchronize(c10::cuda::getCurrentCUDAStream(device.index()));
  if (e != cudaSuccess) throw std::runtime_error(std::string("CUDA stream synchronize: ") + cudaGetErrorString(e));
}

// Starts capturing the calling thread's current stream into `graph`. LibTorch 2 captures in
// thread-local mode, so that other threads' CUDA calls (another batch, perft, training) do
// not spoil the capture; LibTorch 1 has only the global mode.
inline void capture_begin(at::cuda::CUDAGraph& graph) {
#if TORCH_VERSION_MAJOR >= 2
  graph.capture_begin({0, 0}, cudaStreamCaptureModeThreadLocal);
#else
  graph.capture_begin();
#endif
}

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
