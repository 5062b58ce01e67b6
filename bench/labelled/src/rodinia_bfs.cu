// Level-synchronous breadth-first search over a CSR graph, as Rodinia bfs runs it: one
// thread per node, a frontier mask, an "updating" mask for the next level, and a host loop
// that relaunches both kernels until no node changes.
// Imitates: Rodinia 3.1 bfs, Kernel and Kernel2 (cuda/bfs/kernel.cu, kernel2.cu).

#define BFS_THREADS_PER_BLOCK 512

struct GraphNode {
    int starting;
    int no_of_edges;
};

// Expand the frontier: each node of the frontier clears its own mask bit, then gives every
// unvisited neighbour the cost one more than its own and marks it for the next level.
extern "C" __global__ void bfs_expand(const GraphNode* g_graph_nodes, const int* g_graph_edges,
                                      bool* g_graph_mask, bool* g_updating_graph_mask,
                                      const bool* g_graph_visited, int* g_cost,
                                      int no_of_nodes)
{
    int tid = blockIdx.x * BFS_THREADS_PER_BLOCK + threadIdx.x;
    if (tid < no_of_nodes && g_graph_mask[tid]) {
        g_graph_mask[tid] = false;
        int first = g_graph_nodes[tid].starting;
        int last = first + g_graph_nodes[tid].no_of_edges;
        for (int e = first; e < last; e++) {
            int id = g_graph_edges[e];
            if (!g_graph_visited[id]) {
                g_cost[id] = g_cost[tid] + 1;
                g_updating_graph_mask[id] = true;
            }
        }
    }
}

// Commit the next level: nodes marked in the updating mask join the frontier and the visited
// set, raise the "keep going" flag, and clear their updating bit.
extern "C" __global__ void bfs_commit(bool* g_graph_mask, bool* g_updating_graph_mask,
                                      bool* g_graph_visited, bool* g_over, int no_of_nodes)
{
    int tid = blockIdx.x * BFS_THREADS_PER_BLOCK + threadIdx.x;
    if (tid < no_of_nodes && g_updating_graph_mask[tid]) {
        g_graph_mask[tid] = true;
        g_graph_visited[tid] = true;
        *g_over = true;
        g_updating_graph_mask[tid] = false;
    }
}
