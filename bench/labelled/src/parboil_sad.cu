// Sum of absolute differences for motion estimation, as Parboil sad runs it: blk_sad holds,
// for every macroblock, 41 sub-block SAD rows of MAX_POS_PADDED search positions, grouped by
// block type across the frame (types 1-3 16x16..8x16 first, then 8x8, 8x4, 4x8, and the
// sixteen 4x4 blocks last). mb_sad_calc fills the 4x4 rows from the frames; larger_sad_calc_8
// reads the 4x4 rows of its macroblock and writes the 8x8, 8x4 and 4x8 rows of the same
// buffer, two 16-bit SADs per 32-bit word.
// Imitates: Parboil sad, mb_sad_calc (sad4.cu, which reads the reference frame through a
// texture; here through the read-only cache, clamped) and larger_sad_calc_8 (largerBlocks.cu),
// with a 9x9 search window instead of 33x33.

#define SAD_SEARCH_RANGE 4
#define SAD_SEARCH_DIM (2 * SAD_SEARCH_RANGE + 1)
#define SAD_MAX_POS (SAD_SEARCH_DIM * SAD_SEARCH_DIM)
#define SAD_MAX_POS_PADDED 96

extern "C" __global__ void sad_mb_calc(unsigned short* blk_sad, const unsigned short* frame,
                                       const unsigned short* __restrict__ ref, int mb_width,
                                       int mb_height)
{
    // one block per macroblock, threadIdx.y selects the 4x4 sub-block, threadIdx.x walks
    // the search positions
    int mb_x = blockIdx.x, mb_y = blockIdx.y;
    int blk = threadIdx.y;
    int macroblocks = mb_width * mb_height;
    int mb_index = mb_y * mb_width + mb_x;
    int frame_w = mb_width * 16, frame_h = mb_height * 16;
    int bx = mb_x * 16 + (blk & 3) * 4, by = mb_y * 16 + (blk >> 2) * 4;
    unsigned short* out = blk_sad + (macroblocks * 25 + blk) * SAD_MAX_POS_PADDED +
                          mb_index * 16 * SAD_MAX_POS_PADDED;
    for (int pos = threadIdx.x; pos < SAD_MAX_POS; pos += blockDim.x) {
        int dx = pos % SAD_SEARCH_DIM - SAD_SEARCH_RANGE;
        int dy = pos / SAD_SEARCH_DIM - SAD_SEARCH_RANGE;
        unsigned int sad = 0;
        for (int r = 0; r < 4; r++) {
            for (int c = 0; c < 4; c++) {
                int rx = min(max(bx + c + dx, 0), frame_w - 1);
                int ry = min(max(by + r + dy, 0), frame_h - 1);
                int a = frame[(by + r) * frame_w + bx + c];
                int b = __ldg(&ref[ry * frame_w + rx]);
                sad += abs(a - b);
            }
        }
        out[pos] = (unsigned short)sad;
    }
}

extern "C" __global__ void sad_larger_calc_8(unsigned short* blk_sad, int mb_width, int mb_height)
{
    int tx = threadIdx.y & 1;
    int ty = threadIdx.y >> 1;
    int mb_x = blockIdx.x;
    int mb_y = blockIdx.y;
    int macroblocks = __mul24(mb_width, mb_height);
    int macroblock_index = (__mul24(mb_y, mb_width) + mb_x) * SAD_MAX_POS_PADDED;
    unsigned short* bi = blk_sad + (__mul24(macroblocks, 25) + (ty * 8 + tx * 2)) *
                                       SAD_MAX_POS_PADDED + macroblock_index * 16;
    unsigned short* bo_6 = blk_sad + ((macroblocks << 4) + macroblocks + (ty * 4 + tx * 2)) *
                                         SAD_MAX_POS_PADDED + macroblock_index * 8;
    unsigned short* bo_5 = blk_sad + ((macroblocks << 3) + macroblocks + (ty * 4 + tx)) *
                                         SAD_MAX_POS_PADDED + macroblock_index * 8;
    unsigned short* bo_4 = blk_sad + ((macroblocks << 2) + macroblocks + (ty * 2 + tx)) *
                                         SAD_MAX_POS_PADDED + macroblock_index * 4;
    for (int search_pos = threadIdx.x; search_pos < (SAD_MAX_POS + 1) / 2; search_pos += 32) {
        unsigned int i00 = ((const unsigned int*)bi)[search_pos];
        unsigned int i01 = ((const unsigned int*)bi)[search_pos + SAD_MAX_POS_PADDED / 2];
        unsigned int i10 = ((const unsigned int*)bi)[search_pos + 4 * SAD_MAX_POS_PADDED / 2];
        unsigned int i11 = ((const unsigned int*)bi)[search_pos + 5 * SAD_MAX_POS_PADDED / 2];
        ((unsigned int*)bo_6)[search_pos] = i00 + i10;
        ((unsigned int*)bo_6)[search_pos + SAD_MAX_POS_PADDED / 2] = i01 + i11;
        ((unsigned int*)bo_5)[search_pos] = i00 + i01;
        ((unsigned int*)bo_5)[search_pos + 2 * SAD_MAX_POS_PADDED / 2] = i10 + i11;
        ((unsigned int*)bo_4)[search_pos] = (i00 + i01) + (i10 + i11);
    }
}
