// A host program embedding kernels.cu for two architectures plus PTX.
#include <cstdio>
extern "C" __global__ void saxpy(int n, float a, const float *x, float *y);
int main()
{
    std::printf("%p\n", (void *)saxpy);
    return 0;
}
