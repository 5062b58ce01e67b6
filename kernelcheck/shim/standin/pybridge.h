/* Calls from the stand-in driver into its Python half (kernelcheck.standin.driver). */
#ifndef KC_PYBRIDGE_H
#define KC_PYBRIDGE_H

/* Call kernelcheck.standin.driver.<fn>(args built from fmt as by Py_BuildValue) and store
 * the integers of the returned tuple (or the single returned int) in out[0..max_out).
 * Returns how many were stored, or -1 when Python is not in the process, the module cannot
 * be imported, or the call raised (the error is printed once). Takes the GIL. */
int kc_py_ints(const char *fn, long long *out, int max_out, const char *fmt, ...);

#endif
