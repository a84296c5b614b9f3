// ECDSA P-256 verification with a precomputed table for the public key.
//
// Why: a gateway checks three ES256 signatures per notification, nearly all by the same key
// (the leaf of Apple's chain, unchanged for months). Verifying computes u1·G + u2·Q. OpenSSL
// ships a table of multiples of the generator G, so u1·G is cheap; u2·Q is a variable-base
// multiplication, about two thirds of the cost. With a table for Q as well, both halves are
// fixed-base and a check costs about half as much (37 against 74 µs on the benchmark host).
//
// How: OpenSSL builds tables only for a group's generator. So the table's second group is
// P-256 itself (same field, same optimised arithmetic: a duplicate of the named group) with Q
// set as its generator; `EC_GROUP_precompute_mult` then builds the table for Q, and
// `EC_POINT_mul` on that group with a scalar uses it. That function is deprecated in OpenSSL 3
// (the EC_KEY-era API), but kept, and is the only way to precompute for a point other than G.
//
// The arithmetic follows SEC 1 v2 §4.1.4, as OpenSSL's own `ossl_ecdsa_simple_verify_sig`:
// everything here is public data, so nothing needs to run in constant time.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CStoreRelayShims.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <stdlib.h>

struct storerelay_p256_key_table {
    /// P-256 as named: generator G, OpenSSL's static table.
    EC_GROUP *curve;
    /// P-256 with the key Q as generator and a table of multiples of Q.
    EC_GROUP *keyAsGenerator;
};

void storerelay_p256_key_table_free(storerelay_p256_key_table *table) {
    if (table == NULL) return;
    EC_GROUP_free(table->curve);
    EC_GROUP_free(table->keyAsGenerator);
    free(table);
}

storerelay_p256_key_table *storerelay_p256_key_table_new(const EVP_PKEY *key) {
    unsigned char encoded[65]; // uncompressed point: 0x04 ‖ X ‖ Y
    size_t length = 0;
    storerelay_p256_key_table *table = calloc(1, sizeof *table);
    EC_POINT *point = NULL;
    BN_CTX *scratch = BN_CTX_new();
    int ok = table != NULL && scratch != NULL
        && EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, encoded, sizeof encoded, &length)
        && (table->curve = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1)) != NULL
        && (point = EC_POINT_new(table->curve)) != NULL
        // Checks that the point is on the curve.
        && EC_POINT_oct2point(table->curve, point, encoded, length, scratch)
        && !EC_POINT_is_at_infinity(table->curve, point)
        && (table->keyAsGenerator = EC_GROUP_dup(table->curve)) != NULL
        && EC_GROUP_set_generator(table->keyAsGenerator, point, EC_GROUP_get0_order(table->curve),
                                  EC_GROUP_get0_cofactor(table->curve))
        && EC_GROUP_precompute_mult(table->keyAsGenerator, scratch)
        // Without a table the key-as-generator group would still compute correctly, only no
        // faster than the general path: not worth keeping.
        && EC_GROUP_have_precompute_mult(table->keyAsGenerator);
    EC_POINT_free(point);
    BN_CTX_free(scratch);
    if (!ok) {
        ERR_clear_error();
        storerelay_p256_key_table_free(table);
        return NULL;
    }
    return table;
}

int storerelay_p256_key_table_verify(const storerelay_p256_key_table *table, const uint8_t *digest,
                                     const uint8_t *signature, BN_CTX *scratch) {
    int result = -1;
    EC_POINT *sum = NULL, *keyPart = NULL;
    BN_CTX_start(scratch);
    BIGNUM *r = BN_CTX_get(scratch), *s = BN_CTX_get(scratch), *e = BN_CTX_get(scratch);
    BIGNUM *w = BN_CTX_get(scratch), *u1 = BN_CTX_get(scratch), *u2 = BN_CTX_get(scratch);
    BIGNUM *x = BN_CTX_get(scratch);
    const BIGNUM *order = EC_GROUP_get0_order(table->curve);
    if (x == NULL
        || !BN_bin2bn(signature, 32, r) || !BN_bin2bn(signature + 32, 32, s)
        // SHA-256 is exactly as long as the order, so e is the whole digest (SEC 1 §4.1.4 step 3).
        || !BN_bin2bn(digest, 32, e)) goto done;

    // r and s must lie in [1, n-1].
    if (BN_is_zero(r) || BN_is_zero(s) || BN_cmp(r, order) >= 0 || BN_cmp(s, order) >= 0) {
        result = 0;
        goto done;
    }
    // w = s⁻¹, u1 = e·w, u2 = r·w (mod n); n is prime, so s is invertible.
    if (!BN_mod_inverse(w, s, order, scratch)
        || !BN_mod_mul(u1, e, w, order, scratch) || !BN_mod_mul(u2, r, w, order, scratch)) goto done;

    // R = u1·G + u2·Q, each half through its group's table.
    if ((sum = EC_POINT_new(table->curve)) == NULL || (keyPart = EC_POINT_new(table->curve)) == NULL
        || !EC_POINT_mul(table->curve, sum, u1, NULL, NULL, scratch)
        || !EC_POINT_mul(table->keyAsGenerator, keyPart, u2, NULL, NULL, scratch)
        || !EC_POINT_add(table->curve, sum, sum, keyPart, scratch)) goto done;
    if (EC_POINT_is_at_infinity(table->curve, sum)) {
        result = 0;
        goto done;
    }
    // Valid when R's x coordinate, reduced mod n, equals r.
    if (!EC_POINT_get_affine_coordinates(table->curve, sum, x, NULL, scratch)
        || !BN_nnmod(x, x, order, scratch)) goto done;
    result = BN_cmp(x, r) == 0;

done:
    if (result < 0) ERR_clear_error();
    EC_POINT_free(sum);
    EC_POINT_free(keyPart);
    BN_CTX_end(scratch);
    return result;
}
