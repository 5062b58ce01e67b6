// Host driver of the CUDA C conformance cases: `driver list` prints one line per case
// (name, types, domain); `driver run NAME N A.bin [B.bin] OUT.bin` runs a case on N inputs.
// Built and run only by scripts/build_conformance.py.
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <vector>
#include "conformance.h"

ConformanceCase *conformance_cases = 0;

static std::vector<char> slurp(const char *path, size_t size) {
    std::vector<char> data(size);
    FILE *f = fopen(path, "rb");
    if (!f || fread(data.data(), 1, size, f) != size) { fprintf(stderr, "cannot read %s\n", path); exit(1); }
    fclose(f);
    return data;
}

int main(int argc, char **argv) {
    if (argc >= 2 && !strcmp(argv[1], "list")) {
        for (ConformanceCase *c = conformance_cases; c; c = c->next)
            printf("%s %s %s %s %s\n", c->name, c->out_type, c->a_type,
                   c->b_type[0] ? c->b_type : "-", c->domain);
        return 0;
    }
    if (argc < 6 || strcmp(argv[1], "run")) { fprintf(stderr, "usage: driver list | run NAME N A [B] OUT\n"); return 2; }
    for (ConformanceCase *c = conformance_cases; c; c = c->next) {
        if (strcmp(c->name, argv[2])) continue;
        unsigned n = (unsigned)atoi(argv[3]);
        std::vector<char> a = slurp(argv[4], (size_t)n * c->a_size), b;
        const char *out_path = argv[5];
        if (c->b_size) { b = slurp(argv[5], (size_t)n * c->b_size); out_path = argv[6]; }
        std::vector<char> out((size_t)n * c->out_size);
        c->run(out.data(), a.data(), c->b_size ? b.data() : 0, n);
        FILE *f = fopen(out_path, "wb");
        fwrite(out.data(), 1, out.size(), f);
        fclose(f);
        return 0;
    }
    fprintf(stderr, "no case %s\n", argv[2]);
    return 2;
}
