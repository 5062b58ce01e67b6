// MRI reconstruction Q matrix, as Parboil mri-q runs it: PhiMag squares the magnitude of each
// k-space sample; ComputeQ takes a chunk of k-space samples from constant memory and each
// thread accumulates its voxel's Q into registers seeded from, and stored back to, Qr/Qi (the
// host launches it once per chunk).
// Imitates: Parboil mri-q, ComputePhiMag_GPU / ComputeQ_GPU (benchmarks/mri-q/src/cuda/computeQ.cu).

#define MQ_PHI_MAG_THREADS 512
#define MQ_Q_THREADS 256
#define MQ_K_ELEMS_PER_GRID 256
#define MQ_PIx2 6.2831853071795864769252867665590058f

struct kValues {
    float Kx, Ky, Kz, PhiMag;
};

__constant__ kValues ck[MQ_K_ELEMS_PER_GRID];

extern "C" __global__ void mriq_phimag(const float* phiR, const float* phiI, float* phiMag, int numK)
{
    int indexK = blockIdx.x * MQ_PHI_MAG_THREADS + threadIdx.x;
    if (indexK < numK) {
        float real = phiR[indexK];
        float imag = phiI[indexK];
        phiMag[indexK] = real * real + imag * imag;
    }
}

extern "C" __global__ void mriq_computeq(int numK, int kGlobalIndex, const float* x,
                                         const float* y, const float* z, float* Qr, float* Qi)
{
    int xIndex = blockIdx.x * MQ_Q_THREADS + threadIdx.x;
    float sX = x[xIndex], sY = y[xIndex], sZ = z[xIndex];
    float sQr = Qr[xIndex], sQi = Qi[xIndex];
    for (int kIndex = 0; (kIndex < MQ_K_ELEMS_PER_GRID) && (kGlobalIndex < numK);
         kIndex++, kGlobalIndex++) {
        float expArg = MQ_PIx2 * (ck[kIndex].Kx * sX + ck[kIndex].Ky * sY + ck[kIndex].Kz * sZ);
        sQr += ck[kIndex].PhiMag * cosf(expArg);
        sQi += ck[kIndex].PhiMag * sinf(expArg);
    }
    Qr[xIndex] = sQr;
    Qi[xIndex] = sQi;
}
