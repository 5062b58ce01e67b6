// Cardiac myocyte ODE right-hand side, as Rodinia myocyte evaluates it: block 0 thread 0 runs
// the sequential ECC model over the first 46 state variables, block 1 thread 0 runs the CaM
// model three times (dyad, sarcolemma, cytosol) on state slices at offsets 46, 61 and 76,
// each writing its derivatives into finavalu and one value into the communication array;
// a final step folds the CaM fluxes into the ECC derivatives in place.
// Imitates: Rodinia 3.1 myocyte, kernel / kernel_ecc / kernel_cam / kernel_fin
// (cuda/myocyte/kernel.cu, kernel_ecc.cu, kernel_cam.cu, kernel_fin.cu), with a reduced model:
// the same slices, offsets and read/write structure, simpler rate expressions.

typedef float fp;

__device__ void myo_ecc(fp timeinst, const fp* initvalu, fp* finavalu, int valu_offset,
                        const fp* params)
{
    // gating variables: dy/dt = (y_inf - y) / tau, each from its own state variable
    for (int k = 0; k < 46; k++) {
        fp y = initvalu[valu_offset + k];
        fp v = initvalu[valu_offset + 39];
        fp y_inf = 1.0f / (1.0f + expf(-(v + 10.0f * (k % 7)) / 6.0f));
        fp tau = 1.0f + 0.1f * (k % 5) + 0.001f * timeinst;
        finavalu[valu_offset + k] = (y_inf - y) / tau;
    }
    finavalu[valu_offset + 39] = -(initvalu[valu_offset + 0] * params[15] +
                                   initvalu[valu_offset + 1] * params[16]);
}

__device__ fp myo_cam(fp timeinst, const fp* initvalu, fp* finavalu, int valu_offset,
                      const fp* params, int params_offset, fp* com, int com_offset, fp Ca)
{
    fp CaMtot = params[params_offset + 0];
    fp Btot = params[params_offset + 1];
    fp Kd = params[params_offset + 2];
    fp k_on = params[params_offset + 3];
    fp k_off = params[params_offset + 4];
    fp CaM = initvalu[valu_offset + 0];
    fp sum = 0.0f;
    for (int k = 1; k < 15; k++) {
        fp bound = initvalu[valu_offset + k];
        fp rate = k_on * Ca * (CaMtot - bound) / (Kd + Ca) - k_off * bound * Btot;
        finavalu[valu_offset + k] = rate;
        sum += rate;
    }
    finavalu[valu_offset + 0] = -sum + 0.0f * timeinst + CaM * 0.0f;
    com[com_offset] = sum;
    return sum;
}

extern "C" __global__ void myocyte_kernel(int timeinst, const fp* d_initvalu, fp* d_finavalu,
                                          const fp* d_params, fp* d_com)
{
    int bx = blockIdx.x;
    int tx = threadIdx.x;
    if (bx == 0) {
        if (tx == 0)
            myo_ecc(timeinst, d_initvalu, d_finavalu, 0, d_params);
    } else if (bx == 1) {
        if (tx == 0) {
            fp CaDyad = d_initvalu[35] * 1e3f;
            myo_cam(timeinst, d_initvalu, d_finavalu, 46, d_params, 0, d_com, 0, CaDyad);
            fp CaSL = d_initvalu[36] * 1e3f;
            myo_cam(timeinst, d_initvalu, d_finavalu, 61, d_params, 5, d_com, 1, CaSL);
            fp CaCyt = d_initvalu[37] * 1e3f;
            myo_cam(timeinst, d_initvalu, d_finavalu, 76, d_params, 10, d_com, 2, CaCyt);
        }
    }
}

// The final step: the CaM fluxes of the communication array are added to the ECC calcium
// derivatives, and the buffer transfers between the three CaM compartments are applied, all
// in place in finavalu.
extern "C" __global__ void myocyte_fin(const fp* d_initvalu, fp* d_finavalu, const fp* d_com,
                                       fp Vdyad, fp VSL, fp Vmyo)
{
    if (blockIdx.x == 0 && threadIdx.x == 0) {
        fp JCaDyad = d_com[0], JCaSL = d_com[1], JCaCyt = d_com[2];
        d_finavalu[35] = d_finavalu[35] + 1e-3f * JCaDyad;
        d_finavalu[36] = d_finavalu[36] + 1e-3f * JCaSL;
        d_finavalu[37] = d_finavalu[37] + 1e-3f * JCaCyt;
        fp J_cam_dyadSL = 1e-3f * (d_initvalu[46] - d_initvalu[61]);
        fp J_cam_SLmyo = 1e-3f * (d_initvalu[61] - d_initvalu[76]);
        d_finavalu[46] = d_finavalu[46] - J_cam_dyadSL;
        d_finavalu[61] = d_finavalu[61] + J_cam_dyadSL * Vdyad / VSL - J_cam_SLmyo / VSL;
        d_finavalu[76] = d_finavalu[76] + J_cam_SLmyo / Vmyo;
    }
}
