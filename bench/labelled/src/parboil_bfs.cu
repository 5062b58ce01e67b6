// Queue-based breadth-first search, as Parboil bfs runs one frontier level per launch: each
// thread takes a node of the current queue, marks it black, relaxes every outgoing edge with
// atomicMin on the neighbour's cost, and when that improved the cost and the neighbour was not
// already grey for this level (atomicExch on its colour) appends it to its block's shared
// queue; the block then reserves room in the next global queue with an atomicAdd on the tail
// and copies its shared queue there.
// Imitates: Parboil bfs, BFS_kernel / visit_node (benchmarks/bfs/src/cuda/kernel.cu), with one
// shared queue per block instead of the warp-binned local queues.

#define PB_BLOCK 64
#define PB_BLACK 16677217

struct PBNode {
    int x;  // first edge
    int y;  // number of edges
};

struct PBEdge {
    int x;  // destination
    int y;  // cost
};

extern "C" __global__ void parboil_bfs_kernel(const int* q1, int* q2, const PBNode* g_graph_nodes,
                                              const PBEdge* g_graph_edges, int* g_color,
                                              int* g_cost, int no_of_nodes, int* tail,
                                              int gray_shade)
{
    __shared__ int local_q[PB_BLOCK * 8];
    __shared__ int local_tail;
    __shared__ int shift;
    if (threadIdx.x == 0)
        local_tail = 0;
    __syncthreads();

    int tid = blockIdx.x * blockDim.x + threadIdx.x;
    if (tid < no_of_nodes) {
        int pid = q1[tid];
        g_color[pid] = PB_BLACK;
        int cur_cost = g_cost[pid];
        PBNode cur_node = g_graph_nodes[pid];
        for (int i = cur_node.x; i < cur_node.y + cur_node.x; i++) {
            PBEdge cur_edge = g_graph_edges[i];
            int id = cur_edge.x;
            int cost = cur_edge.y + cur_cost;
            int orig_cost = atomicMin(&g_cost[id], cost);
            if (orig_cost > cost) {
                int old_color = atomicExch(&g_color[id], gray_shade);
                if (old_color != gray_shade) {
                    int slot = atomicAdd(&local_tail, 1);
                    if (slot < PB_BLOCK * 8)
                        local_q[slot] = id;
                }
            }
        }
    }
    __syncthreads();
    if (threadIdx.x == 0)
        shift = atomicAdd(tail, min(local_tail, PB_BLOCK * 8));
    __syncthreads();
    for (int k = threadIdx.x; k < min(local_tail, PB_BLOCK * 8); k += blockDim.x)
        q2[shift + k] = local_q[k];
}
