/* SPDX-License-Identifier: Apache-2.0 */
/* amg_inputs.h - inputs and expected values of the core/amg tests.
 *
 * tools/make_amg_testdata.py computes the expected values with the official
 * Python functions into tests/data/amg/amg_cases.json; the inputs are not
 * stored but regenerated here from the same integer hash (the functions
 * below mirror hval_at, hash_mask, hash_values, hash_boxes, sort_keys and
 * digest of that script one for one).
 */
#ifndef SAMC_TESTS_AMG_INPUTS_H
#define SAMC_TESTS_AMG_INPUTS_H

#include <stdint.h>

#include <cjson/cJSON.h>

/* float32 in [0, 1) from index i and seed. */
float amg_hval(uint64_t i, uint32_t seed);

/* Blocky random mask XOR sparse noise, h x w row-major 0/1. */
void amg_hash_mask(uint8_t *m, int h, int w, uint32_t seed, double density, int block,
                   double noise);

/* float32 (hval - 0.5) * scale, rounded to multiples of 1/quant if quant > 0. */
void amg_hash_values(float *v, int64_t n, uint32_t seed, float scale, float quant);

/* n integer boxes [n, 4] as float32: corner in [0, extent), size in [0, max_size). */
void amg_hash_boxes(float *b, int64_t n, uint32_t seed, double extent, double max_size);

/* sum(v[i] * (2i + 1)) mod 2^64, the script's digest. */
uint64_t amg_digest_i64(const int64_t *v, int64_t n);
uint64_t amg_digest_u8(const uint8_t *v, int64_t n);

/* The digest string of a case ("%016x") as a number. */
uint64_t amg_json_digest(const cJSON *item, const char *key);

/* tests/data/amg/amg_cases.json, parsed (fails the test if missing). Free
 * with cJSON_Delete. */
cJSON *amg_load_cases(void);

/* Typed access that fails the test when the key is missing. */
const cJSON *amg_get(const cJSON *obj, const char *key);
double amg_num(const cJSON *obj, const char *key);
int amg_int(const cJSON *obj, const char *key);
/* A JSON number array into a malloc'd int64 / double array; *n its length. */
int64_t *amg_i64_array(const cJSON *arr, int64_t *n);
double *amg_f64_array(const cJSON *arr, int64_t *n);

#endif
