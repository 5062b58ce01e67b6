// B+ tree queries, as Rodinia b+tree runs them: one block per query, one thread per key slot of
// a node; for each level every thread tests whether the query falls between its key and the
// next, the matching thread moves the block's current node (kept in global memory, one entry
// per query) down the tree, and the leaf's record is copied to the answer.
// Imitates: Rodinia 3.1 b+tree, findK and findRangeK (cuda/b+tree/kernel/kernel_gpu_cuda*.cu),
// with a smaller node order (31 keys).

#define BT_ORDER 31

struct BTRecord {
    int value;
};

struct BTKnode {
    int location;
    int indices[BT_ORDER + 1];
    int keys[BT_ORDER + 1];
    bool is_leaf;
    int num_keys;
};

extern "C" __global__ void btree_findK(long height, const BTKnode* knodesD, long knodes_elem,
                                       const BTRecord* recordsD, long* currKnodeD,
                                       long* offsetD, const int* keysD, BTRecord* ansD)
{
    int thid = threadIdx.x;
    int bid = blockIdx.x;
    for (int i = 0; i < height; i++) {
        if ((knodesD[currKnodeD[bid]].keys[thid]) <= keysD[bid] &&
            (knodesD[currKnodeD[bid]].keys[thid + 1] > keysD[bid])) {
            if (knodesD[offsetD[bid]].indices[thid] < knodes_elem)
                offsetD[bid] = knodesD[offsetD[bid]].indices[thid];
        }
        __syncthreads();
        if (thid == 0)
            currKnodeD[bid] = offsetD[bid];
        __syncthreads();
    }
    if (knodesD[currKnodeD[bid]].keys[thid] == keysD[bid])
        ansD[bid].value = recordsD[knodesD[currKnodeD[bid]].indices[thid]].value;
}

extern "C" __global__ void btree_findRangeK(long height, const BTKnode* knodesD, long knodes_elem,
                                            long* currKnodeD, long* offsetD, long* lastKnodeD,
                                            long* offset_2D, const int* startD, const int* endD,
                                            int* RecstartD, int* ReclenD)
{
    int thid = threadIdx.x;
    int bid = blockIdx.x;
    for (int i = 0; i < height; i++) {
        if ((knodesD[currKnodeD[bid]].keys[thid] <= startD[bid]) &&
            (knodesD[currKnodeD[bid]].keys[thid + 1] > startD[bid])) {
            if (knodesD[currKnodeD[bid]].indices[thid] < knodes_elem)
                offsetD[bid] = knodesD[currKnodeD[bid]].indices[thid];
        }
        if ((knodesD[lastKnodeD[bid]].keys[thid] <= endD[bid]) &&
            (knodesD[lastKnodeD[bid]].keys[thid + 1] > endD[bid])) {
            if (knodesD[lastKnodeD[bid]].indices[thid] < knodes_elem)
                offset_2D[bid] = knodesD[lastKnodeD[bid]].indices[thid];
        }
        __syncthreads();
        if (thid == 0) {
            currKnodeD[bid] = offsetD[bid];
            lastKnodeD[bid] = offset_2D[bid];
        }
        __syncthreads();
    }
    int pid = -1;
    if (knodesD[currKnodeD[bid]].keys[thid] == startD[bid]) {
        pid = knodesD[currKnodeD[bid]].indices[thid];
        RecstartD[bid] = pid;
    }
    __syncthreads();
    if (knodesD[lastKnodeD[bid]].keys[thid] == endD[bid])
        ReclenD[bid] = knodesD[lastKnodeD[bid]].indices[thid] - RecstartD[bid] + 1;
}
