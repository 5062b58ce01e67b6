/* Module images as the driver receives them: where their bytes are, how many, their hash. */
#ifndef KC_IMAGE_H
#define KC_IMAGE_H

#include <stddef.h>
#include <stdint.h>

/* The bytes of a module image given to cuModuleLoadData & co: an ELF cubin (size from its
 * headers), a fatbin (0xBA55ED50 header: header size + payload size), a fatbin wrapper
 * (0x466243B1, the __fatbinwrap record, followed to its fatbin) or NUL-terminated PTX text
 * (without the NUL). Returns the start and stores the size; NULL for a NULL image. */
const void *kc_image_span(const void *image, size_t *size);

/* Kept for the stand-in: the size of kc_image_span's bytes. */
size_t kc_image_size(const void *image);

/* SHA-256 of data, as 64 lowercase hex digits and a NUL, as Python's hashlib gives it. */
void kc_sha256_hex(const void *data, size_t size, char out[65]);

#endif
