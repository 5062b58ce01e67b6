// Cutoff Coulombic potential on a lattice, as Parboil cutcp runs it: atoms are sorted into
// spatial bins of 8 float4 slots (x, y, z, q; empty slots have q = 0); each block computes a
// region of 8x8x8 lattice points in one z plane pass, visits the neighbourhood of bins listed
// (as offsets) in constant memory, and stores the four potentials each thread accumulates into
// its region of the output lattice.
// Imitates: Parboil cutcp, cuda_cutoff_potential_lattice6overlap
// (benchmarks/cutcp/src/cuda/cutoff6overlap.cu), with fewer neighbour bins and no overlap
// bookkeeping.

#define CC_BIN_DEPTH 8
#define CC_NBRLIST_MAXLEN 64
#define CC_REGION 8

__constant__ int NbrListLen;
__constant__ int3 NbrList[CC_NBRLIST_MAXLEN];

extern "C" __global__ void cutcp_lattice(int binDim_x, int binDim_y, const float4* binZeroAddr,
                                         float h, float cutoff2, float inv_cutoff2,
                                         float* regionZeroAddr, int zRegionIndex)
{
    __shared__ float4 AtomBinCache[CC_BIN_DEPTH];
    const int xRegionIndex = blockIdx.x;
    const int yRegionIndex = blockIdx.y;
    const int tid = (threadIdx.z * 8 + threadIdx.y) * 8 + threadIdx.x;
    float* myRegionAddr = regionZeroAddr +
        ((zRegionIndex * gridDim.y + yRegionIndex) * gridDim.x + xRegionIndex) *
            (CC_REGION * CC_REGION * CC_REGION);
    // each thread handles 4 lattice points spaced 2 apart in z
    float x = (CC_REGION * xRegionIndex + threadIdx.x) * h;
    float y = (CC_REGION * yRegionIndex + threadIdx.y) * h;
    float z = (CC_REGION * zRegionIndex + 2 * threadIdx.z) * h;
    int myBinIndex_x = xRegionIndex, myBinIndex_y = yRegionIndex, myBinIndex_z = zRegionIndex;
    float energy0 = 0.f, energy1 = 0.f, energy2 = 0.f, energy3 = 0.f;

    for (int nbrid = 0; nbrid < NbrListLen; nbrid++) {
        int i = myBinIndex_x + NbrList[nbrid].x;
        int j = myBinIndex_y + NbrList[nbrid].y;
        int k = myBinIndex_z + NbrList[nbrid].z;
        __syncthreads();
        if (tid < CC_BIN_DEPTH) {
            const float4* bin = binZeroAddr + ((k * binDim_y + j) * binDim_x + i) * CC_BIN_DEPTH;
            AtomBinCache[tid] = bin[tid];
        }
        __syncthreads();
        for (int n = 0; n < CC_BIN_DEPTH; n++) {
            float4 a = AtomBinCache[n];
            if (a.w == 0.0f)
                break;
            float dx = a.x - x, dy = a.y - y, dz = a.z - z;
            float dxdy2 = dx * dx + dy * dy;
            float r2 = dxdy2 + dz * dz;
            if (r2 < cutoff2) {
                float s = 1.f - r2 * inv_cutoff2;
                energy0 += a.w * rsqrtf(r2) * s * s;
            }
            dz -= 2.f * h;
            r2 = dxdy2 + dz * dz;
            if (r2 < cutoff2) {
                float s = 1.f - r2 * inv_cutoff2;
                energy1 += a.w * rsqrtf(r2) * s * s;
            }
            dz -= 2.f * h;
            r2 = dxdy2 + dz * dz;
            if (r2 < cutoff2) {
                float s = 1.f - r2 * inv_cutoff2;
                energy2 += a.w * rsqrtf(r2) * s * s;
            }
            dz -= 2.f * h;
            r2 = dxdy2 + dz * dz;
            if (r2 < cutoff2) {
                float s = 1.f - r2 * inv_cutoff2;
                energy3 += a.w * rsqrtf(r2) * s * s;
            }
        }
    }
    myRegionAddr[(tid >> 4) * 64 + (tid & 15)] = energy0;
    myRegionAddr[(tid >> 4) * 64 + (tid & 15) + 16] = energy1;
    myRegionAddr[(tid >> 4) * 64 + (tid & 15) + 32] = energy2;
    myRegionAddr[(tid >> 4) * 64 + (tid & 15) + 48] = energy3;
}
