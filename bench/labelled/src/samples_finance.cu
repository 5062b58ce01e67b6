// Option pricing samples: Black-Scholes (two options per thread through float2 loads, out of
// place), Monte Carlo (one block per option; each thread copies its random generator state
// from global memory to registers, never writing it back, sums payoffs over its paths, and the
// block reduces them in shared memory to the option's expected value and confidence; a setup
// kernel seeds the states), binomial options (no parameters at all: option data in constant
// memory, results in a module-scope __device__ array, the lattice walked backwards in shared
// memory), and the quasirandom generator (Niederreiter table in constant memory, written
// out; an inverse-normal pass that transforms an input array, or generates its own uniform
// samples when the input pointer is null).
// Imitates: NVIDIA cuda-samples BlackScholes (BlackScholes_kernel.cuh), MonteCarloMultiGPU
// (MonteCarlo_kernel.cu: MonteCarloOneBlockPerOption, rngSetupStates; a small xorshift state
// stands in for curandState), binomialOptions (binomialOptions_kernel.cu) and
// quasirandomGenerator (quasirandomGenerator_kernel.cu).

#define BS_A1 0.31938153f
#define BS_A2 -0.356563782f
#define BS_A3 1.781477937f
#define BS_A4 -1.821255978f
#define BS_A5 1.330274429f
#define BS_RSQRT2PI 0.39894228040143267793994605993438f

__device__ inline float bs_cndGPU(float d)
{
    float K = __fdividef(1.0f, (1.0f + 0.2316419f * fabsf(d)));
    float cnd = BS_RSQRT2PI * __expf(-0.5f * d * d) *
                (K * (BS_A1 + K * (BS_A2 + K * (BS_A3 + K * (BS_A4 + K * BS_A5)))));
    if (d > 0)
        cnd = 1.0f - cnd;
    return cnd;
}

__device__ inline void bs_body(float& CallResult, float& PutResult, float S, float X, float T,
                               float R, float V)
{
    float sqrtT = __fdividef(1.0F, rsqrtf(T));
    float d1 = __fdividef(__logf(S / X) + (R + 0.5f * V * V) * T, V * sqrtT);
    float d2 = d1 - V * sqrtT;
    float CNDD1 = bs_cndGPU(d1);
    float CNDD2 = bs_cndGPU(d2);
    float expRT = __expf(-R * T);
    CallResult = S * CNDD1 - X * expRT * CNDD2;
    PutResult = X * expRT * (1.0f - CNDD2) - S * (1.0f - CNDD1);
}

extern "C" __global__ void BlackScholesGPU(float2* __restrict d_CallResult,
                                           float2* __restrict d_PutResult,
                                           const float2* __restrict d_StockPrice,
                                           const float2* __restrict d_OptionStrike,
                                           const float2* __restrict d_OptionYears,
                                           float Riskfree, float Volatility, int optN)
{
    const int opt = blockDim.x * blockIdx.x + threadIdx.x;
    if (opt < (optN / 2)) {
        float callResult1, callResult2, putResult1, putResult2;
        bs_body(callResult1, putResult1, d_StockPrice[opt].x, d_OptionStrike[opt].x,
                d_OptionYears[opt].x, Riskfree, Volatility);
        bs_body(callResult2, putResult2, d_StockPrice[opt].y, d_OptionStrike[opt].y,
                d_OptionYears[opt].y, Riskfree, Volatility);
        d_CallResult[opt] = make_float2(callResult1, callResult2);
        d_PutResult[opt] = make_float2(putResult1, putResult2);
    }
}

// ---------------------------------------------------------------- Monte Carlo
#define MC_THREAD_N 128

struct MCRngState {
    unsigned int x, y, z, w;
};

struct MCOptionData {
    float S, X, MuByT, VBySqrtT;
};

struct MCOptionValue {
    float Expected, Confidence;
};

__device__ inline float mc_uniform(MCRngState& s)
{
    unsigned int t = s.x ^ (s.x << 11);
    s.x = s.y; s.y = s.z; s.z = s.w;
    s.w = s.w ^ (s.w >> 19) ^ (t ^ (t >> 8));
    return (s.w >> 8) * (1.0f / 16777216.0f) + (0.5f / 16777216.0f);
}

__device__ inline float mc_normal(MCRngState& s)
{
    float u1 = mc_uniform(s), u2 = mc_uniform(s);
    return sqrtf(-2.0f * __logf(u1)) * __cosf(6.2831853f * u2);
}

extern "C" __global__ void MonteCarloOneBlockPerOption(const MCRngState* __restrict rngStates,
                                                       const MCOptionData* __restrict d_OptionData,
                                                       MCOptionValue* __restrict d_CallValue,
                                                       int pathN, int optionN)
{
    __shared__ float s_SumCall[MC_THREAD_N];
    __shared__ float s_Sum2Call[MC_THREAD_N];
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    MCRngState localState = rngStates[tid];
    for (int optionIndex = blockIdx.x; optionIndex < optionN; optionIndex += gridDim.x) {
        const float S = d_OptionData[optionIndex].S;
        const float X = d_OptionData[optionIndex].X;
        const float MuByT = d_OptionData[optionIndex].MuByT;
        const float VBySqrtT = d_OptionData[optionIndex].VBySqrtT;
        float sum = 0.0f, sum2 = 0.0f;
        for (int i = threadIdx.x; i < pathN; i += MC_THREAD_N) {
            float r = mc_normal(localState);
            float callValue = S * __expf(MuByT + VBySqrtT * r) - X;
            callValue = callValue > 0.0f ? callValue : 0.0f;
            sum += callValue;
            sum2 += callValue * callValue;
        }
        s_SumCall[threadIdx.x] = sum;
        s_Sum2Call[threadIdx.x] = sum2;
        for (int stride = MC_THREAD_N / 2; stride > 0; stride >>= 1) {
            __syncthreads();
            if (threadIdx.x < stride) {
                s_SumCall[threadIdx.x] += s_SumCall[threadIdx.x + stride];
                s_Sum2Call[threadIdx.x] += s_Sum2Call[threadIdx.x + stride];
            }
        }
        __syncthreads();
        if (threadIdx.x == 0) {
            MCOptionValue v;
            v.Expected = s_SumCall[0];
            v.Confidence = s_Sum2Call[0];
            d_CallValue[optionIndex] = v;
        }
        __syncthreads();
    }
}

extern "C" __global__ void rngSetupStates(MCRngState* rngState, int device_id)
{
    int tid = threadIdx.x + blockIdx.x * blockDim.x;
    unsigned int seed = (blockIdx.x + gridDim.x * device_id) * 2654435761u + threadIdx.x;
    MCRngState s;
    s.x = seed ^ 0x12345678u;
    s.y = seed * 1664525u + 1013904223u;
    s.z = s.y * 1664525u + 1013904223u;
    s.w = s.z * 1664525u + 1013904223u;
    rngState[tid] = s;
}

// ---------------------------------------------------------------- binomial options
#define BO_MAX_OPTIONS 64
#define BO_NUM_STEPS 256
#define BO_THREADBLOCK_SIZE 64
#define BO_ELEMS_PER_THREAD (BO_NUM_STEPS / BO_THREADBLOCK_SIZE)

struct BOOptionData {
    float S, X, vDt, puByDf, pdByDf;
};

static __constant__ BOOptionData d_OptionData[BO_MAX_OPTIONS];
__device__ float d_CallValue[BO_MAX_OPTIONS];

__device__ inline float bo_expiryCallValue(float S, float X, float vDt, int i)
{
    float d = S * __expf(vDt * (2.0f * i - BO_NUM_STEPS)) - X;
    return (d > 0.0F) ? d : 0.0F;
}

extern "C" __global__ void binomialOptionsKernel()
{
    __shared__ float call_exchange[BO_THREADBLOCK_SIZE + 1];
    const int tid = threadIdx.x;
    const float S = d_OptionData[blockIdx.x].S;
    const float X = d_OptionData[blockIdx.x].X;
    const float vDt = d_OptionData[blockIdx.x].vDt;
    const float puByDf = d_OptionData[blockIdx.x].puByDf;
    const float pdByDf = d_OptionData[blockIdx.x].pdByDf;
    float call[BO_ELEMS_PER_THREAD + 1];
#pragma unroll
    for (int i = 0; i < BO_ELEMS_PER_THREAD; ++i)
        call[i] = bo_expiryCallValue(S, X, vDt, tid * BO_ELEMS_PER_THREAD + i);
    if (tid == 0)
        call_exchange[BO_THREADBLOCK_SIZE] = bo_expiryCallValue(S, X, vDt, BO_NUM_STEPS);
    int final_it = max(0, tid * BO_ELEMS_PER_THREAD - 1);
    for (int i = BO_NUM_STEPS; i > 0; --i) {
        call_exchange[tid] = call[0];
        __syncthreads();
        call[BO_ELEMS_PER_THREAD] = call_exchange[tid + 1];
        __syncthreads();
        if (i > final_it) {
#pragma unroll
            for (int j = 0; j < BO_ELEMS_PER_THREAD; ++j)
                call[j] = puByDf * call[j + 1] + pdByDf * call[j];
        }
    }
    if (tid == 0)
        d_CallValue[blockIdx.x] = call[0];
}

// ---------------------------------------------------------------- quasirandom generator
#define QR_DIMENSIONS 3
#define QR_RESOLUTION 31
#define QR_INT_SCALE (1.0f / (float)0x80000001U)

static __constant__ unsigned int c_Table[QR_DIMENSIONS][QR_RESOLUTION];

extern "C" __global__ void quasirandomGeneratorKernel(float* d_Output, unsigned int seed,
                                                      unsigned int N)
{
    const unsigned int* dimBase = &c_Table[threadIdx.y][0];
    unsigned int tid = __umul24(blockDim.x, blockIdx.x) + threadIdx.x;
    unsigned int threadN = __umul24(blockDim.x, gridDim.x);
    for (unsigned int pos = tid; pos < N; pos += threadN) {
        unsigned int result = 0;
        unsigned int data = seed + pos;
        for (int bit = 0; bit < QR_RESOLUTION; bit++, data >>= 1)
            if (data & 1)
                result ^= dimBase[bit];
        d_Output[__umul24(threadIdx.y, N) + pos] = (float)(result + 1) * QR_INT_SCALE;
    }
}

__device__ inline float qr_MoroInvCND(float p)
{
    const float a1 = 2.50662823884f, a2 = -18.61500062529f, a3 = 41.39119773534f,
                a4 = -25.44106049637f, b1 = -8.4736109309f, b2 = 23.08336743743f,
                b3 = -21.06224101826f, b4 = 3.13082909833f;
    float z, y = p - 0.5f;
    if (fabsf(y) < 0.42f) {
        z = y * y;
        z = y * (((a4 * z + a3) * z + a2) * z + a1) / ((((b4 * z + b3) * z + b2) * z + b1) * z + 1.0f);
    } else {
        z = (y > 0.0f) ? __logf(-__logf(1.0f - p)) : __logf(-__logf(p));
        z = 0.3374754822726147f + z * (0.9761690190917186f + z * 0.1607979714918209f);
        if (y < 0.0f)
            z = -z;
    }
    return z;
}

extern "C" __global__ void inverseCNDKernel(float* d_Output, const unsigned int* d_Input,
                                            unsigned int pathN)
{
    float q = 1.0f / (float)(__umul24(blockDim.x, gridDim.x) + 1);
    unsigned int tid = __umul24(blockDim.x, blockIdx.x) + threadIdx.x;
    unsigned int threadN = __umul24(blockDim.x, gridDim.x);
    if (d_Input) {
        for (unsigned int pos = tid; pos < pathN; pos += threadN) {
            unsigned int d = d_Input[pos];
            d_Output[pos] = qr_MoroInvCND((d + 0.5f) * 2.3283064365386963e-10f);
        }
    } else {
        for (unsigned int pos = tid; pos < pathN; pos += threadN) {
            float d = (float)(pos + 1) * q;
            d_Output[pos] = qr_MoroInvCND(d);
        }
    }
}
