// Back-propagation of a two-layer perceptron, as Rodinia backprop runs its forward layer and
// its weight adjustment on the GPU: 16x16 thread blocks, one block row per 16 input units.
// The weight matrices are updated in place.
// Imitates: Rodinia 3.1 backprop, bpnn_layerforward_CUDA and bpnn_adjust_weights_cuda
// (cuda/backprop/backprop_cuda_kernel.cu).

#define BP_HEIGHT 16
#define BP_WIDTH 16
#define BP_ETA 0.3f
#define BP_MOMENTUM 0.3f

// Multiply each weight by its input unit, reduce the products of a column in shared memory,
// write the reduced weight tile back over the weights and one partial sum per hidden unit.
extern "C" __global__ void bpnn_layerforward(const float* input_cuda, float* output_hidden_cuda,
                                             float* input_hidden_cuda,
                                             float* hidden_partial_sum, int in, int hid)
{
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int index = (hid + 1) * BP_HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
    int index_in = BP_HEIGHT * by + ty + 1;

    __shared__ float input_node[BP_HEIGHT];
    __shared__ float weight_matrix[BP_HEIGHT][BP_WIDTH];

    if (tx == 0)
        input_node[ty] = input_cuda[index_in];
    __syncthreads();
    weight_matrix[ty][tx] = input_hidden_cuda[index];
    __syncthreads();
    weight_matrix[ty][tx] = weight_matrix[ty][tx] * input_node[ty];
    __syncthreads();
    for (int step = 2; step <= BP_HEIGHT; step *= 2) {
        if (ty % step == 0)
            weight_matrix[ty][tx] = weight_matrix[ty][tx] + weight_matrix[ty + step / 2][tx];
        __syncthreads();
    }
    input_hidden_cuda[index] = weight_matrix[ty][tx];
    __syncthreads();
    if (tx == 0)
        hidden_partial_sum[by * hid + ty] = weight_matrix[tx][ty];
}

// w += eta * delta * ly + momentum * oldw, and oldw takes the new step: both matrices are read
// and written at the same index by the same thread.
extern "C" __global__ void bpnn_adjust_weights(const float* delta, int hid, const float* ly,
                                               int in, float* w, float* oldw)
{
    int by = blockIdx.y;
    int tx = threadIdx.x;
    int ty = threadIdx.y;
    int index = (hid + 1) * BP_HEIGHT * by + (hid + 1) * ty + tx + 1 + (hid + 1);
    int index_y = BP_HEIGHT * by + ty + 1;
    int index_x = tx + 1;

    w[index] += (BP_ETA * delta[index_x] * ly[index_y]) + (BP_MOMENTUM * oldw[index]);
    oldw[index] = (BP_ETA * delta[index_x] * ly[index_y]) + (BP_MOMENTUM * oldw[index]);
    __syncthreads();
    if (ty == 0 && by == 0) {
        w[index_x] += (BP_ETA * delta[index_x]) + (BP_MOMENTUM * oldw[index_x]);
        oldw[index_x] = (BP_ETA * delta[index_x]) + (BP_MOMENTUM * oldw[index_x]);
    }
}
