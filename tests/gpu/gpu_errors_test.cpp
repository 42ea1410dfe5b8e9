// Which CUDA errors count as device faults (the context is lost, the worker must restart).
// Pure host: no device needed.
#include <gtest/gtest.h>

#include <cuda_runtime_api.h>

#include "worker/cuda/gpu_errors.h"

namespace pgmate::gpu {
namespace {

TEST(CudaErrorClassification, ContextKillingErrorsAreDeviceFaults) {
  for (cudaError_t e : {cudaErrorIllegalAddress, cudaErrorLaunchFailure, cudaErrorHardwareStackError,
                        cudaErrorIllegalInstruction, cudaErrorMisalignedAddress, cudaErrorInvalidAddressSpace,
                        cudaErrorInvalidPc, cudaErrorECCUncorrectable}) {
    EXPECT_TRUE(is_context_fatal(e)) << cudaGetErrorName(e);
    EXPECT_THROW(check_cuda(e, "run kernel"), DeviceFault) << cudaGetErrorName(e);
  }
}

TEST(CudaErrorClassification, OrdinaryErrorsAreNotDeviceFaults) {
  for (cudaError_t e : {cudaErrorMemoryAllocation, cudaErrorInvalidValue, cudaErrorNoDevice,
                        cudaErrorInsufficientDriver, cudaErrorLaunchOutOfResources, cudaErrorInvalidConfiguration}) {
    EXPECT_FALSE(is_context_fatal(e)) << cudaGetErrorName(e);
    try {
      check_cuda(e, "allocate");
      ADD_FAILURE() << "no exception for " << cudaGetErrorName(e);
    } catch (const DeviceFault&) {
      ADD_FAILURE() << cudaGetErrorName(e) << " classified as a device fault";
    } catch (const std::runtime_error& err) {
      EXPECT_NE(std::string(err.what()).find("allocate"), std::string::npos) << err.what();
    }
  }
  EXPECT_NO_THROW(check_cuda(cudaSuccess, "nothing"));
}

}  // namespace
}  // namespace pgmate::gpu
