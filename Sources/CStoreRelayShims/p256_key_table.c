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
// The arithmetic follows SEC 1 v2 §4.1.4, as OpenSSL's own `ossl_ecdsa_simple_verify_sig`,
// with two shortcuts once the multiplications are cheap, where OpenSSL's general routines were
// a third of what was left: s⁻¹ mod n by a binary extended Euclid on 64-bit limbs (5 against
// BN_mod_inverse's 13.5 µs), and R's x checked in Jacobian coordinates, X = r·Z², instead of
// inverting Z. Everything here is public data, so nothing needs to run in constant time.
#define OPENSSL_SUPPRESS_DEPRECATED
#include "CStoreRelayShims.h"
#include <openssl/bn.h>
#include <openssl/core_names.h>
#include <openssl/ec.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/obj_mac.h>
#include <stdlib.h>
#include <string.h>

// MARK: Inversion modulo the order n of P-256

typedef unsigned __int128 uint128;

/// n, least significant limb first.
static const uint64_t order[4] = {
    0xF3B9CAC2FC632551ULL, 0xBCE6FAADA7179E84ULL, 0xFFFFFFFFFFFFFFFFULL, 0xFFFFFFFF00000000ULL,
};
/// n⁻¹ mod 2⁶⁴ (n is odd): what makes `halve` one multiplication.
static const uint64_t orderInverse64 = 0x332E375511FF43B1ULL;

static int compare(const uint64_t a[4], const uint64_t b[4]) {
    for (int i = 3; i >= 0; i--) {
        if (a[i] != b[i]) return a[i] > b[i] ? 1 : -1;
    }
    return 0;
}

/// r = a − b; returns the borrow (1 when a < b).
static uint64_t subtract(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    uint64_t borrow = 0;
    for (int i = 0; i < 4; i++) {
        uint128 difference = (uint128)a[i] - b[i] - borrow;
        r[i] = (uint64_t)difference;
        borrow = (uint64_t)(difference >> 64) & 1;
    }
    return borrow;
}

/// r = a − b mod n, for a and b in [0, n).
static void subtractModOrder(uint64_t r[4], const uint64_t a[4], const uint64_t b[4]) {
    if (!subtract(r, a, b)) return;
    uint64_t carry = 0;
    for (int i = 0; i < 4; i++) {
        uint128 sum = (uint128)r[i] + order[i] + carry;
        r[i] = (uint64_t)sum;
        carry = (uint64_t)(sum >> 64);
    }
}

/// x = x · 2⁻ᵏ mod n for x in [0, n) and k in [1, 63]: adds the multiple m·n (m < 2ᵏ) that
/// clears x's low k bits, then shifts. The result is below 2n, so one subtraction reduces it.
static void halveModOrder(uint64_t x[4], unsigned k) {
    uint64_t m = (0 - x[0] * orderInverse64) & ((1ULL << k) - 1);
    uint64_t t[5], carry = 0;
    for (int i = 0; i < 4; i++) {
        uint128 product = (uint128)m * order[i] + x[i] + carry;
        t[i] = (uint64_t)product;
        carry = (uint64_t)(product >> 64);
    }
    t[4] = carry;
    for (int i = 0; i < 4; i++) t[i] = (t[i] >> k) | (t[i + 1] << (64 - k));
    t[4] >>= k;
    uint64_t reduced[4];
    uint64_t borrow = subtract(reduced, t, order);
    memcpy(x, (t[4] || !borrow) ? reduced : t, sizeof reduced);
}

/// Divides u by its largest power of two 2ᵏ (u ≠ 0) and x by the same 2ᵏ mod n.
static void stripTwos(uint64_t u[4], uint64_t x[4]) {
    while ((u[0] & 1) == 0) {
        unsigned k = u[0] ? (unsigned)__builtin_ctzll(u[0]) : 63;
        for (int i = 0; i < 3; i++) u[i] = (u[i] >> k) | (u[i + 1] << (64 - k));
        u[3] >>= k;
        halveModOrder(x, k);
    }
}

int storerelay_p256_order_inverse(uint8_t inverse[32], const uint8_t value[32]) {
    uint64_t a[4];
    for (int i = 0; i < 4; i++) {
        uint64_t limb = 0;
        for (int j = 0; j < 8; j++) limb = limb << 8 | value[(3 - i) * 8 + j];
        a[i] = limb;
    }
    if ((a[0] | a[1] | a[2] | a[3]) == 0 || compare(a, order) >= 0) return 0;

    // Binary extended Euclid on (u, v) = (a, n), keeping x1·a ≡ u and x2·a ≡ v (mod n).
    // Both stay odd; the larger loses the smaller and its factors of two until u = v = 1.
    uint64_t u[4], v[4], x1[4] = {1, 0, 0, 0}, x2[4] = {0, 0, 0, 0};
    memcpy(u, a, sizeof u);
    memcpy(v, order, sizeof v);
    stripTwos(u, x1);
    for (;;) {
        int comparison = compare(u, v);
        if (comparison == 0) break; // u = v = gcd(a, n) = 1: n is prime
        if (comparison > 0) {
            subtract(u, u, v);
            subtractModOrder(x1, x1, x2);
            stripTwos(u, x1);
        } else {
            subtract(v, v, u);
            subtractModOrder(x2, x2, x1);
            stripTwos(v, x2);
        }
    }
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j < 8; j++) inverse[(3 - i) * 8 + j] = (uint8_t)(x1[i] >> (56 - 8 * j));
    }
    return 1;
}

// MARK: The table and verification

struct storerelay_p256_key_table {
    /// P-256 as named: generator G, OpenSSL's static table.
    EC_GROUP *curve;
    /// P-256 with the key Q as generator and a table of multiples of Q.
    EC_GROUP *keyAsGenerator;
    /// The field prime p and p − n: x(R) ≡ r (mod n) when x(R) is r, or r + n if below p.
    BIGNUM *prime, *primeMinusOrder;
};

void storerelay_p256_key_table_free(storerelay_p256_key_table *table) {
    if (table == NULL) return;
    EC_GROUP_free(table->curve);
    EC_GROUP_free(table->keyAsGenerator);
    BN_free(table->prime);
    BN_free(table->primeMinusOrder);
    free(table);
}

storerelay_p256_key_table *storerelay_p256_key_table_new(const EVP_PKEY *key) {
    unsigned char encoded[65]; // uncompressed point: 0x04 ‖ X ‖ Y
    size_t length = 0;
    // Errors raised here are ours to drop; entries already queued by the caller stay.
    ERR_set_mark();
    storerelay_p256_key_table *table = calloc(1, sizeof *table);
    EC_POINT *point = NULL;
    BN_CTX *scratch = BN_CTX_new();
    int ok = table != NULL && scratch != NULL
        && EVP_PKEY_get_octet_string_param(key, OSSL_PKEY_PARAM_PUB_KEY, encoded, sizeof encoded, &length)
        && (table->curve = EC_GROUP_new_by_curve_name(NID_X9_62_prime256v1)) != NULL
        && (table->prime = BN_new()) != NULL && (table->primeMinusOrder = BN_new()) != NULL
        && EC_GROUP_get_curve(table->curve, table->prime, NULL, NULL, scratch)
        && BN_sub(table->primeMinusOrder, table->prime, EC_GROUP_get0_order(table->curve))
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
    ERR_pop_to_mark();
    if (!ok) {
        storerelay_p256_key_table_free(table);
        return NULL;
    }
    return table;
}

int storerelay_p256_key_table_verify(const storerelay_p256_key_table *table, const uint8_t *digest,
                                     const uint8_t *signature, BN_CTX *scratch) {
    int result = -1;
    EC_POINT *sum = NULL, *keyPart = NULL;
    uint8_t inverse[32];
    ERR_set_mark();
    BN_CTX_start(scratch);
    BIGNUM *r = BN_CTX_get(scratch), *e = BN_CTX_get(scratch), *w = BN_CTX_get(scratch);
    BIGNUM *u1 = BN_CTX_get(scratch), *u2 = BN_CTX_get(scratch);
    BIGNUM *x = BN_CTX_get(scratch), *z = BN_CTX_get(scratch), *candidate = BN_CTX_get(scratch);
    const BIGNUM *n = EC_GROUP_get0_order(table->curve);
    if (candidate == NULL || !BN_bin2bn(signature, 32, r)
        // SHA-256 is exactly as long as the order, so e is the whole digest (SEC 1 §4.1.4 step 3).
        || !BN_bin2bn(digest, 32, e)) goto done;

    // r and s must lie in [1, n-1]; the inverse checks s.
    if (BN_is_zero(r) || BN_cmp(r, n) >= 0 || !storerelay_p256_order_inverse(inverse, signature + 32)) {
        result = 0;
        goto done;
    }
    // w = s⁻¹, u1 = e·w, u2 = r·w (mod n).
    if (!BN_bin2bn(inverse, 32, w)
        || !BN_mod_mul(u1, e, w, n, scratch) || !BN_mod_mul(u2, r, w, n, scratch)) goto done;

    // R = u1·G + u2·Q, each half through its group's table.
    if ((sum = EC_POINT_new(table->curve)) == NULL || (keyPart = EC_POINT_new(table->curve)) == NULL
        || !EC_POINT_mul(table->curve, sum, u1, NULL, NULL, scratch)
        || !EC_POINT_mul(table->keyAsGenerator, keyPart, u2, NULL, NULL, scratch)
        || !EC_POINT_add(table->curve, sum, sum, keyPart, scratch)) goto done;
    if (EC_POINT_is_at_infinity(table->curve, sum)) {
        result = 0;
        goto done;
    }
    // Valid when x(R) mod n = r. R is (X, Y, Z) with x(R) = X/Z², and x(R) < p < 2n, so:
    // X = r·Z² (mod p), or X = (r + n)·Z² when r + n < p.
    if (!EC_POINT_get_Jprojective_coordinates_GFp(table->curve, sum, x, NULL, z, scratch)
        || !BN_mod_sqr(z, z, table->prime, scratch)
        || !BN_mod_mul(candidate, r, z, table->prime, scratch)) goto done;
    result = BN_cmp(candidate, x) == 0;
    if (!result && BN_cmp(r, table->primeMinusOrder) < 0) {
        if (!BN_add(candidate, r, n) || !BN_mod_mul(candidate, candidate, z, table->prime, scratch)) {
            result = -1;
            goto done;
        }
        result = BN_cmp(candidate, x) == 0;
    }

done:
    ERR_pop_to_mark();
    EC_POINT_free(sum);
    EC_POINT_free(keyPart);
    BN_CTX_end(scratch);
    return result;
}
