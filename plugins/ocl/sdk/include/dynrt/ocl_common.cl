// Device-side helpers shared by every OpenCL kernel the SDK builds: the SDK
// puts this file ahead of each op's .cl source (after the JIT constants), so
// an op's kernel uses these names without defining them.
//
//   KERNEL(name)              the entry-point declarator
//   CAT(a, b)                 token pasting after expansion (CAT(INPUT0_TYPE, 4) -> float4)
//   LOAD(p, i) / STORE(p, i, v)
//                             element access by DATA_F16 (a JIT constant the op
//                             sets from its dtype, dynrt::jit_data_f16): f16 goes
//                             through vload_half / vstore_half_rte (core OpenCL
//                             1.2, no cl_khr_fp16) and computes in float; other
//                             types are plain accesses, STORE converting to
//                             OUTPUT0_TYPE
//   LOAD4(T, p, i) / STORE4(T, p, i, v)
//                             vector i of 4 elements of a buffer of element type
//                             T: through a vector pointer (buffers start aligned,
//                             so a GPU makes one 16-byte access), vload_half4 /
//                             vstore_half4_rte for f16 (float4 values)
//   FLOAT_ACC                 a float accumulator: double where the device has fp64
//   HAS_FUSED_OPS, FUSED_OPS_ARGS, FUSED_OPS_PASS, FUSED_OPS
//                             empty defaults when the impl adds no fused post-ops
//                             (dynrt/ocl_fused_ops.hpp)
#define KERNEL(name) __kernel void name

#define CAT_(a, b) a##b
#define CAT(a, b) CAT_(a, b)

#if DATA_F16
#define LOAD(p, i) vload_half((i), (p))
#define STORE(p, i, v) vstore_half_rte((float)(v), (i), (p))
#define LOAD4(T, p, i) vload_half4((i), (p))
#define STORE4(T, p, i, v) vstore_half4_rte((v), (i), (p))
#else
#define LOAD(p, i) ((p)[(i)])
#define STORE(p, i, v) ((p)[(i)] = (OUTPUT0_TYPE)(v))
#define LOAD4(T, p, i) (((__global const CAT(T, 4)*)(p))[(i)])
#define STORE4(T, p, i, v) (((__global CAT(T, 4)*)(p))[(i)] = (v))
#endif

#ifdef cl_khr_fp64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define FLOAT_ACC double
#else
#define FLOAT_ACC float
#endif

#ifndef FUSED_OPS_ARGS
#define HAS_FUSED_OPS 0
#define FUSED_OPS_ARGS
#define FUSED_OPS_PASS
#define FUSED_OPS
#endif
