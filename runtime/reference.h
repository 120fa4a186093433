#pragma once
// Everything a correctness check needs: device buffers and fills, the cuBLAS and fp64
// host references, error metrics, and device discovery.
#include "runtime/cublas_reference.h"
#include "runtime/device_buffer.h"
#include "runtime/device_info.h"
#include "runtime/error_metrics.h"
#include "runtime/host_dtype.h"
#include "runtime/host_reference.h"
