// Unstructured-grid Euler solver, as Rodinia cfd runs it: five conserved variables per element
// stored variable-major (variables[i + v * nelr]), four neighbours per element given by an index
// array (negative indices are boundary markers), far-field values in constant memory.
// Imitates: Rodinia 3.1 cfd, cuda_initialize_variables / cuda_compute_step_factor /
// cuda_compute_flux / cuda_time_step (cuda/cfd/euler3d.cu).

#define CFD_NNB 4
#define CFD_NDIM 3
#define CFD_NVAR (CFD_NDIM + 2)
#define CFD_VAR_DENSITY 0
#define CFD_VAR_MOMENTUM 1
#define CFD_VAR_DENSITY_ENERGY (CFD_VAR_MOMENTUM + CFD_NDIM)
#define CFD_GAMMA 1.4f
#define CFD_RK 3

__constant__ float ff_variable[CFD_NVAR];
__constant__ float3 ff_flux_contribution_momentum_x;
__constant__ float3 ff_flux_contribution_momentum_y;
__constant__ float3 ff_flux_contribution_momentum_z;
__constant__ float3 ff_flux_contribution_density_energy;

__device__ inline float3 cfd_velocity(float density, float3 momentum)
{
    return make_float3(momentum.x / density, momentum.y / density, momentum.z / density);
}

__device__ inline float cfd_speed_sqd(float3 v) { return v.x * v.x + v.y * v.y + v.z * v.z; }

__device__ inline float cfd_pressure(float density, float density_energy, float speed_sqd)
{
    return (CFD_GAMMA - 1.0f) * (density_energy - 0.5f * density * speed_sqd);
}

__device__ inline float cfd_speed_of_sound(float density, float pressure)
{
    return sqrtf(CFD_GAMMA * pressure / density);
}

extern "C" __global__ void cfd_initialize_variables(int nelr, float* variables)
{
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    for (int j = 0; j < CFD_NVAR; j++)
        variables[i + j * nelr] = ff_variable[j];
}

extern "C" __global__ void cfd_compute_step_factor(int nelr, const float* variables,
                                                   const float* areas, float* step_factors)
{
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    float density = variables[i + CFD_VAR_DENSITY * nelr];
    float3 momentum = make_float3(variables[i + (CFD_VAR_MOMENTUM + 0) * nelr],
                                  variables[i + (CFD_VAR_MOMENTUM + 1) * nelr],
                                  variables[i + (CFD_VAR_MOMENTUM + 2) * nelr]);
    float density_energy = variables[i + CFD_VAR_DENSITY_ENERGY * nelr];
    float3 velocity = cfd_velocity(density, momentum);
    float speed_sqd = cfd_speed_sqd(velocity);
    float pressure = cfd_pressure(density, density_energy, speed_sqd);
    float speed_of_sound = cfd_speed_of_sound(density, pressure);
    step_factors[i] = 0.5f / (sqrtf(areas[i]) * (sqrtf(speed_sqd) + speed_of_sound));
}

__device__ inline void cfd_flux_contribution(float density, float3 momentum,
                                             float density_energy, float pressure,
                                             float3 velocity, float3& fc_momentum_x,
                                             float3& fc_momentum_y, float3& fc_momentum_z,
                                             float3& fc_density_energy)
{
    fc_momentum_x.x = velocity.x * momentum.x + pressure;
    fc_momentum_x.y = velocity.x * momentum.y;
    fc_momentum_x.z = velocity.x * momentum.z;
    fc_momentum_y.x = fc_momentum_x.y;
    fc_momentum_y.y = velocity.y * momentum.y + pressure;
    fc_momentum_y.z = velocity.y * momentum.z;
    fc_momentum_z.x = fc_momentum_x.z;
    fc_momentum_z.y = fc_momentum_y.z;
    fc_momentum_z.z = velocity.z * momentum.z + pressure;
    float de_p = density_energy + pressure;
    fc_density_energy.x = velocity.x * de_p;
    fc_density_energy.y = velocity.y * de_p;
    fc_density_energy.z = velocity.z * de_p;
}

extern "C" __global__ void cfd_compute_flux(int nelr, const int* elements_surrounding_elements,
                                            const float* normals, const float* variables,
                                            float* fluxes)
{
    const float smoothing_coefficient = 0.2f;
    const int i = blockDim.x * blockIdx.x + threadIdx.x;

    float density_i = variables[i + CFD_VAR_DENSITY * nelr];
    float3 momentum_i = make_float3(variables[i + (CFD_VAR_MOMENTUM + 0) * nelr],
                                    variables[i + (CFD_VAR_MOMENTUM + 1) * nelr],
                                    variables[i + (CFD_VAR_MOMENTUM + 2) * nelr]);
    float density_energy_i = variables[i + CFD_VAR_DENSITY_ENERGY * nelr];
    float3 velocity_i = cfd_velocity(density_i, momentum_i);
    float speed_sqd_i = cfd_speed_sqd(velocity_i);
    float speed_i = sqrtf(speed_sqd_i);
    float pressure_i = cfd_pressure(density_i, density_energy_i, speed_sqd_i);
    float speed_of_sound_i = cfd_speed_of_sound(density_i, pressure_i);
    float3 fc_i_mx, fc_i_my, fc_i_mz, fc_i_de;
    cfd_flux_contribution(density_i, momentum_i, density_energy_i, pressure_i, velocity_i,
                          fc_i_mx, fc_i_my, fc_i_mz, fc_i_de);

    float flux_i_density = 0.0f;
    float3 flux_i_momentum = make_float3(0.0f, 0.0f, 0.0f);
    float flux_i_density_energy = 0.0f;

    for (int j = 0; j < CFD_NNB; j++) {
        int nb = elements_surrounding_elements[i + j * nelr];
        float3 normal = make_float3(normals[i + (j + 0 * CFD_NNB) * nelr],
                                    normals[i + (j + 1 * CFD_NNB) * nelr],
                                    normals[i + (j + 2 * CFD_NNB) * nelr]);
        float normal_len = sqrtf(normal.x * normal.x + normal.y * normal.y + normal.z * normal.z);
        if (nb >= 0) {
            float density_nb = variables[nb + CFD_VAR_DENSITY * nelr];
            float3 momentum_nb = make_float3(variables[nb + (CFD_VAR_MOMENTUM + 0) * nelr],
                                             variables[nb + (CFD_VAR_MOMENTUM + 1) * nelr],
                                             variables[nb + (CFD_VAR_MOMENTUM + 2) * nelr]);
            float density_energy_nb = variables[nb + CFD_VAR_DENSITY_ENERGY * nelr];
            float3 velocity_nb = cfd_velocity(density_nb, momentum_nb);
            float speed_sqd_nb = cfd_speed_sqd(velocity_nb);
            float pressure_nb = cfd_pressure(density_nb, density_energy_nb, speed_sqd_nb);
            float speed_of_sound_nb = cfd_speed_of_sound(density_nb, pressure_nb);
            float3 fc_nb_mx, fc_nb_my, fc_nb_mz, fc_nb_de;
            cfd_flux_contribution(density_nb, momentum_nb, density_energy_nb, pressure_nb,
                                  velocity_nb, fc_nb_mx, fc_nb_my, fc_nb_mz, fc_nb_de);
            float factor = -normal_len * smoothing_coefficient * 0.5f *
                           (speed_i + sqrtf(speed_sqd_nb) + speed_of_sound_i + speed_of_sound_nb);
            flux_i_density += factor * (density_i - density_nb);
            flux_i_density_energy += factor * (density_energy_i - density_energy_nb);
            flux_i_momentum.x += factor * (momentum_i.x - momentum_nb.x);
            flux_i_momentum.y += factor * (momentum_i.y - momentum_nb.y);
            flux_i_momentum.z += factor * (momentum_i.z - momentum_nb.z);
            factor = 0.5f * normal.x;
            flux_i_density += factor * (momentum_nb.x + momentum_i.x);
            flux_i_density_energy += factor * (fc_nb_de.x + fc_i_de.x);
            flux_i_momentum.x += factor * (fc_nb_mx.x + fc_i_mx.x);
            flux_i_momentum.y += factor * (fc_nb_my.x + fc_i_my.x);
            flux_i_momentum.z += factor * (fc_nb_mz.x + fc_i_mz.x);
            factor = 0.5f * normal.y;
            flux_i_density += factor * (momentum_nb.y + momentum_i.y);
            flux_i_density_energy += factor * (fc_nb_de.y + fc_i_de.y);
            flux_i_momentum.x += factor * (fc_nb_mx.y + fc_i_mx.y);
            flux_i_momentum.y += factor * (fc_nb_my.y + fc_i_my.y);
            flux_i_momentum.z += factor * (fc_nb_mz.y + fc_i_mz.y);
            factor = 0.5f * normal.z;
            flux_i_density += factor * (momentum_nb.z + momentum_i.z);
            flux_i_density_energy += factor * (fc_nb_de.z + fc_i_de.z);
            flux_i_momentum.x += factor * (fc_nb_mx.z + fc_i_mx.z);
            flux_i_momentum.y += factor * (fc_nb_my.z + fc_i_my.z);
            flux_i_momentum.z += factor * (fc_nb_mz.z + fc_i_mz.z);
        } else if (nb == -1) {
            flux_i_momentum.x += normal.x * pressure_i;
            flux_i_momentum.y += normal.y * pressure_i;
            flux_i_momentum.z += normal.z * pressure_i;
        } else if (nb == -2) {
            float factor = 0.5f * normal.x;
            flux_i_density += factor * (ff_variable[CFD_VAR_MOMENTUM + 0] + momentum_i.x);
            flux_i_density_energy += factor * (ff_flux_contribution_density_energy.x + fc_i_de.x);
            flux_i_momentum.x += factor * (ff_flux_contribution_momentum_x.x + fc_i_mx.x);
            flux_i_momentum.y += factor * (ff_flux_contribution_momentum_y.x + fc_i_my.x);
            flux_i_momentum.z += factor * (ff_flux_contribution_momentum_z.x + fc_i_mz.x);
        }
    }
    fluxes[i + CFD_VAR_DENSITY * nelr] = flux_i_density;
    fluxes[i + (CFD_VAR_MOMENTUM + 0) * nelr] = flux_i_momentum.x;
    fluxes[i + (CFD_VAR_MOMENTUM + 1) * nelr] = flux_i_momentum.y;
    fluxes[i + (CFD_VAR_MOMENTUM + 2) * nelr] = flux_i_momentum.z;
    fluxes[i + CFD_VAR_DENSITY_ENERGY * nelr] = flux_i_density_energy;
}

extern "C" __global__ void cfd_time_step(int j, int nelr, const float* old_variables,
                                         float* variables, const float* step_factors,
                                         const float* fluxes)
{
    const int i = blockDim.x * blockIdx.x + threadIdx.x;
    float factor = step_factors[i] / float(CFD_RK + 1 - j);
    variables[i + CFD_VAR_DENSITY * nelr] =
        old_variables[i + CFD_VAR_DENSITY * nelr] + factor * fluxes[i + CFD_VAR_DENSITY * nelr];
    variables[i + CFD_VAR_DENSITY_ENERGY * nelr] =
        old_variables[i + CFD_VAR_DENSITY_ENERGY * nelr] +
        factor * fluxes[i + CFD_VAR_DENSITY_ENERGY * nelr];
    variables[i + (CFD_VAR_MOMENTUM + 0) * nelr] =
        old_variables[i + (CFD_VAR_MOMENTUM + 0) * nelr] +
        factor * fluxes[i + (CFD_VAR_MOMENTUM + 0) * nelr];
    variables[i + (CFD_VAR_MOMENTUM + 1) * nelr] =
        old_variables[i + (CFD_VAR_MOMENTUM + 1) * nelr] +
        factor * fluxes[i + (CFD_VAR_MOMENTUM + 1) * nelr];
    variables[i + (CFD_VAR_MOMENTUM + 2) * nelr] =
        old_variables[i + (CFD_VAR_MOMENTUM + 2) * nelr] +
        factor * fluxes[i + (CFD_VAR_MOMENTUM + 2) * nelr];
}
