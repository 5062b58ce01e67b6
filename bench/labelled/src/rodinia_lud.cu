// Blocked LU decomposition in place, as Rodinia lud runs it: for each 16-wide step the host
// launches the diagonal kernel (one block factors the diagonal tile), the perimeter kernel
// (the tiles right of and below it) and the internal kernel (the trailing submatrix update
// m -= L * U). Every kernel reads tiles of m and writes results back into m.
// Imitates: Rodinia 3.1 lud, lud_diagonal / lud_perimeter / lud_internal (cuda/lud/cuda/lud_kernel.cu).

#define LUD_BLOCK 16

extern "C" __global__ void lud_diagonal(float* m, int matrix_dim, int offset)
{
    __shared__ float shadow[LUD_BLOCK][LUD_BLOCK];
    int array_offset = offset * matrix_dim + offset;
    for (int i = 0; i < LUD_BLOCK; i++) {
        shadow[i][threadIdx.x] = m[array_offset + threadIdx.x];
        array_offset += matrix_dim;
    }
    __syncthreads();
    for (int i = 0; i < LUD_BLOCK - 1; i++) {
        if (threadIdx.x > i) {
            for (int j = 0; j < i; j++)
                shadow[threadIdx.x][i] -= shadow[threadIdx.x][j] * shadow[j][i];
            shadow[threadIdx.x][i] /= shadow[i][i];
        }
        __syncthreads();
        if (threadIdx.x > i) {
            for (int j = 0; j < i + 1; j++)
                shadow[i + 1][threadIdx.x] -= shadow[i + 1][j] * shadow[j][threadIdx.x];
        }
        __syncthreads();
    }
    array_offset = (offset + 1) * matrix_dim + offset;
    for (int i = 1; i < LUD_BLOCK; i++) {
        m[array_offset + threadIdx.x] = shadow[i][threadIdx.x];
        array_offset += matrix_dim;
    }
}

extern "C" __global__ void lud_perimeter(float* m, int matrix_dim, int offset)
{
    __shared__ float dia[LUD_BLOCK][LUD_BLOCK];
    __shared__ float peri_row[LUD_BLOCK][LUD_BLOCK];
    __shared__ float peri_col[LUD_BLOCK][LUD_BLOCK];
    int array_offset;
    int idx;

    if (threadIdx.x < LUD_BLOCK) {
        idx = threadIdx.x;
        array_offset = offset * matrix_dim + offset;
        for (int i = 0; i < LUD_BLOCK / 2; i++) {
            dia[i][idx] = m[array_offset + idx];
            array_offset += matrix_dim;
        }
        array_offset = offset * matrix_dim + offset;
        for (int i = 0; i < LUD_BLOCK; i++) {
            peri_row[i][idx] = m[array_offset + (blockIdx.x + 1) * LUD_BLOCK + idx];
            array_offset += matrix_dim;
        }
    } else {
        idx = threadIdx.x - LUD_BLOCK;
        array_offset = (offset + LUD_BLOCK / 2) * matrix_dim + offset;
        for (int i = LUD_BLOCK / 2; i < LUD_BLOCK; i++) {
            dia[i][idx] = m[array_offset + idx];
            array_offset += matrix_dim;
        }
        array_offset = (offset + (blockIdx.x + 1) * LUD_BLOCK) * matrix_dim + offset;
        for (int i = 0; i < LUD_BLOCK; i++) {
            peri_col[i][idx] = m[array_offset + idx];
            array_offset += matrix_dim;
        }
    }
    __syncthreads();

    if (threadIdx.x < LUD_BLOCK) {
        idx = threadIdx.x;
        for (int i = 1; i < LUD_BLOCK; i++)
            for (int j = 0; j < i; j++)
                peri_row[i][idx] -= dia[i][j] * peri_row[j][idx];
    } else {
        idx = threadIdx.x - LUD_BLOCK;
        for (int i = 0; i < LUD_BLOCK; i++) {
            for (int j = 0; j < i; j++)
                peri_col[idx][i] -= peri_col[idx][j] * dia[j][i];
            peri_col[idx][i] /= dia[i][i];
        }
    }
    __syncthreads();

    if (threadIdx.x < LUD_BLOCK) {
        idx = threadIdx.x;
        array_offset = (offset + 1) * matrix_dim + offset;
        for (int i = 1; i < LUD_BLOCK; i++) {
            m[array_offset + (blockIdx.x + 1) * LUD_BLOCK + idx] = peri_row[i][idx];
            array_offset += matrix_dim;
        }
    } else {
        idx = threadIdx.x - LUD_BLOCK;
        array_offset = (offset + (blockIdx.x + 1) * LUD_BLOCK) * matrix_dim + offset;
        for (int i = 0; i < LUD_BLOCK; i++) {
            m[array_offset + idx] = peri_col[i][idx];
            array_offset += matrix_dim;
        }
    }
}

extern "C" __global__ void lud_internal(float* m, int matrix_dim, int offset)
{
    __shared__ float peri_row[LUD_BLOCK][LUD_BLOCK];
    __shared__ float peri_col[LUD_BLOCK][LUD_BLOCK];
    int global_row_id = offset + (blockIdx.y + 1) * LUD_BLOCK;
    int global_col_id = offset + (blockIdx.x + 1) * LUD_BLOCK;

    peri_row[threadIdx.y][threadIdx.x] =
        m[(offset + threadIdx.y) * matrix_dim + global_col_id + threadIdx.x];
    peri_col[threadIdx.y][threadIdx.x] =
        m[(global_row_id + threadIdx.y) * matrix_dim + offset + threadIdx.x];
    __syncthreads();
    float sum = 0;
    for (int i = 0; i < LUD_BLOCK; i++)
        sum += peri_col[threadIdx.y][i] * peri_row[i][threadIdx.x];
    m[(global_row_id + threadIdx.y) * matrix_dim + global_col_id + threadIdx.x] -= sum;
}
