// What the perft kernels share on the device side (CUDA only, not for plain C++ callers):
// one low-priority non-blocking stream, a blocking-sync event to wait on it, a cancel word in
// pinned mapped host memory that running kernels read, and growable RAII device buffers.
// Perft never uses the legacy default stream, cudaDeviceSynchronize or per-call
// cudaDeviceSetLimit, so it neither waits for nor stalls LibTorch's work on other streams.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <mutex>

#include "worker/cuda/gpu_errors.h"

namespace pgmate::gpu::detail {

inline void check(cudaError_t err, const char* what) { check_cuda(int(err), what); }

// The most plies one thread of the recursive checkers perft searches (its stack is sized
// for this once, at start-up).
constexpr int kCheckersStackPlies = 10;

// Read by kernels once per subtree (or per warp): nonzero means stop early.
using CancelWord = const volatile unsigned*;

__device__ __forceinline__ bool cancel_requested(CancelWord word) { return *word != 0; }

class PerftDevice {
 public:
  // The process-wide instance, created on first use (throws when there is no device).
  static PerftDevice& instance();

  cudaStream_t stream() const { return stream_; }
  CancelWord device_cancel_word() const { return device_cancel_; }

  // Serialises the perft runs (buffers and the cancel word are shared).
  std::mutex& mutex() { return mutex_; }

  // Raises the context's stack limit for the recursive checkers kernels, the first time
  // only (call with mutex() held).
  void ensure_checkers_stack();

  // Clears the cancel word before a run.
  void reset_cancel() { *host_cancel_ = 0; }
  bool cancel_set() const { return *host_cancel_ != 0; }

  // Waits for everything queued on the stream. With a hook, polls it every few hundred
  // microseconds (sleeping, not spinning) and sets the cancel word when it answers true;
  // throws PerftCancelled if the word is set once the stream is idle. Classifies errors.
  void wait(const std::function<bool()>& cancelled, const char* what);

  // Throws PerftCancelled when the hook answers true (sets the word, for later launches).
  void throw_if_cancelled(const std::function<bool()>& cancelled);

  PerftDevice(const PerftDevice&) = delete;
  PerftDevice& operator=(const PerftDevice&) = delete;

 private:
  PerftDevice();
  ~PerftDevice();
  void release_resources();

  cudaStream_t stream_ = nullptr;
  cudaEvent_t done_ = nullptr;
  volatile unsigned* host_cancel_ = nullptr;
  unsigned* device_cancel_ = nullptr;
  bool checkers_stack_set_ = false;
  std::mutex mutex_;
};

// A device buffer that only grows (freed and reallocated on the perft stream when a larger
// one is needed; kept between runs). Allocation failures throw before anything leaks.
template <class T>
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  ~DeviceBuffer() {
    if (ptr_) cudaFreeAsync(ptr_, stream_);
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  T* reserve(std::size_t n, cudaStream_t stream) {
    if (n <= capacity_ && ptr_) return ptr_;
    if (ptr_) check(cudaFreeAsync(ptr_, stream), "free device buffer");
    ptr_ = nullptr;
    capacity_ = 0;
    void* p = nullptr;
    check(cudaMallocAsync(&p, (n ? n : 1) * sizeof(T), stream), "allocate device buffer");
    ptr_ = static_cast<T*>(p);
    capacity_ = n;
    stream_ = stream;
    return ptr_;
  }
  T* get() const { return ptr_; }
  std::size_t capacity() const { return capacity_; }
  void release(cudaStream_t stream) {
    if (ptr_) cudaFreeAsync(ptr_, stream);
    ptr_ = nullptr;
    capacity_ = 0;
  }

 private:
  T* ptr_ = nullptr;
  std::size_t capacity_ = 0;
  cudaStream_t stream_ = nullptr;
};

// Page-locked host memory for read-backs (RAII).
template <class T>
class PinnedBuffer {
 public:
  explicit PinnedBuffer(std::size_t n) {
    void* p = nullptr;
    check(cudaMallocHost(&p, (n ? n : 1) * sizeof(T)), "allocate pinned host buffer");
    ptr_ = static_cast<T*>(p);
  }
  ~PinnedBuffer() { cudaFreeHost(ptr_); }
  PinnedBuffer(const PinnedBuffer&) = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  T* get() const { return ptr_; }
  T& operator[](std::size_t i) const { return ptr_[i]; }

 private:
  T* ptr_ = nullptr;
};

// Warp-sum of a 64-bit count, then one atomic per warp (all 32 lanes must call this).
__device__ __forceinline__ void warp_add(unsigned long long* total, unsigned long long value) {
  for (int offset = 16; offset > 0; offset /= 2) value += __shfl_down_sync(0xffffffffu, value, offset);
  if ((threadIdx.x & 31) == 0 && value) atomicAdd(total, value);
}

inline unsigned blocks_for(std::size_t n, unsigned threads) { return unsigned((n + threads - 1) / threads); }

}  // namespace pgmate::gpu::detail
