#include "worker/cuda/gpu_errors.h"

#include <cuda_runtime_api.h>

namespace pgmate::gpu {

bool is_context_fatal(int cuda_error) {
  switch (cudaError_t(cuda_error)) {
    case cudaErrorIllegalAddress:
    case cudaErrorLaunchFailure:
    case cudaErrorHardwareStackError:
    case cudaErrorIllegalInstruction:
    case cudaErrorMisalignedAddress:
    case cudaErrorInvalidAddressSpace:
    case cudaErrorInvalidPc:
    case cudaErrorECCUncorrectable:
    case cudaErrorAssert:
    case cudaErrorLaunchTimeout:
    case cudaErrorTensorMemoryLeak:
    case cudaErrorContextIsDestroyed:
      return true;
    default:
      return false;
  }
}

void check_cuda(int cuda_error, const char* what) {
  if (cuda_error == cudaSuccess) return;
  const auto err = cudaError_t(cuda_error);
  std::string message = std::string("CUDA ") + what + ": " + cudaGetErrorName(err) + " (" + cudaGetErrorString(err) + ")";
  if (is_context_fatal(cuda_error)) throw DeviceFault(message + "; the CUDA context is lost");
  throw std::runtime_error(message);
}

}  // namespace pgmate::gpu
