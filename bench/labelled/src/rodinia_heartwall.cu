// Heart-wall tracking, as Rodinia heartwall runs it: one block per tracked point; every pointer
// lives in constant-memory structures (common parameters, one record per point, the frame
// number), and the kernel takes no arguments. Frame 0 captures each point's template from the
// frame; later frames copy the search window around the point into the point's scratch buffer,
// correlate the template against it, and record the best location; every tenth frame the
// point's position and template are updated in place from the new frame.
// Imitates: Rodinia 3.1 heartwall, kernel (cuda/heartwall/kernel.cu), reduced: a plain
// cross-correlation instead of the normalised one, no mask convolution.

#define HW_POINTS 8
#define HW_THREADS 64

struct HWCommon {
    int frame_rows;
    int frame_cols;
    int no_frames;
    int sSize;        // search half-width
    int tSize;        // template half-width
    int in_rows;      // template side, 2 * tSize + 1
    int in2_rows;     // search window side, 2 * sSize + 1
    float alpha;
    const float* d_frame;
};

struct HWUnique {
    int point_no;
    int* d_Row;
    int* d_Col;
    int* d_tRowLoc;
    int* d_tColLoc;
    float* d_T;       // this point's template, in_rows * in_rows floats
    float* d_in2;     // this point's search-window scratch, in2_rows * in2_rows floats
};

__constant__ HWCommon d_common;
__constant__ int d_frame_no;
__constant__ HWUnique d_unique[HW_POINTS];

extern "C" __global__ void heartwall_kernel()
{
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    const HWUnique& u = d_unique[bx];
    int frame_no = d_frame_no;
    int in_rows = d_common.in_rows;
    int in_elem = in_rows * in_rows;
    int in2_rows = d_common.in2_rows;
    int in2_elem = in2_rows * in2_rows;

    __shared__ float best_val[HW_THREADS];
    __shared__ int best_pos[HW_THREADS];

    if (frame_no == 0) {
        if (tx == 0) {
            int pointer = u.point_no * d_common.no_frames + frame_no;
            u.d_tRowLoc[pointer] = u.d_Row[u.point_no];
            u.d_tColLoc[pointer] = u.d_Col[u.point_no];
        }
        for (int ei = tx; ei < in_elem; ei += HW_THREADS) {
            int row = ei % in_rows, col = ei / in_rows;
            int ori_row = u.d_Row[u.point_no] - d_common.tSize + row;
            int ori_col = u.d_Col[u.point_no] - d_common.tSize + col;
            u.d_T[col * in_rows + row] = d_common.d_frame[ori_col * d_common.frame_rows + ori_row];
        }
    }

    if (frame_no != 0) {
        int rowlow = u.d_Row[u.point_no] - d_common.sSize;
        int collow = u.d_Col[u.point_no] - d_common.sSize;
        for (int ei = tx; ei < in2_elem; ei += HW_THREADS) {
            int row = ei % in2_rows, col = ei / in2_rows;
            u.d_in2[ei] = d_common.d_frame[(col + collow) * d_common.frame_rows + row + rowlow];
        }
        __syncthreads();
        // correlate the template at every offset of the window where it fits
        int span = in2_rows - in_rows + 1;
        float mine = -1e30f;
        int mine_pos = 0;
        for (int pos = tx; pos < span * span; pos += HW_THREADS) {
            int r0 = pos % span, c0 = pos / span;
            float s = 0.0f;
            for (int c = 0; c < in_rows; c++)
                for (int r = 0; r < in_rows; r++)
                    s += u.d_T[c * in_rows + r] * u.d_in2[(c0 + c) * in2_rows + r0 + r];
            if (s > mine) {
                mine = s;
                mine_pos = pos;
            }
        }
        best_val[tx] = mine;
        best_pos[tx] = mine_pos;
        __syncthreads();
        if (tx == 0) {
            for (int k = 1; k < HW_THREADS; k++) {
                if (best_val[k] > best_val[0]) {
                    best_val[0] = best_val[k];
                    best_pos[0] = best_pos[k];
                }
            }
            int pointer = u.point_no * d_common.no_frames + frame_no;
            u.d_tRowLoc[pointer] = rowlow + best_pos[0] % span + d_common.tSize;
            u.d_tColLoc[pointer] = collow + best_pos[0] / span + d_common.tSize;
        }
    }

    if (frame_no != 0 && frame_no % 10 == 0) {
        __syncthreads();
        int loc_pointer = u.point_no * d_common.no_frames + frame_no;
        if (tx == 0) {
            u.d_Row[u.point_no] = u.d_tRowLoc[loc_pointer];
            u.d_Col[u.point_no] = u.d_tColLoc[loc_pointer];
        }
        __syncthreads();
        for (int ei = tx; ei < in_elem; ei += HW_THREADS) {
            int row = ei % in_rows, col = ei / in_rows;
            int ori_row = u.d_tRowLoc[loc_pointer] - d_common.tSize + row;
            int ori_col = u.d_tColLoc[loc_pointer] - d_common.tSize + col;
            u.d_T[ei] = d_common.alpha * u.d_T[ei] +
                        (1.0f - d_common.alpha) *
                            d_common.d_frame[ori_col * d_common.frame_rows + ori_row];
        }
    }
}
