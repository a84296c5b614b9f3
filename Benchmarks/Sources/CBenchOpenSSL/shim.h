#ifndef STORERELAY_BENCH_OPENSSL_H
#define STORERELAY_BENCH_OPENSSL_H
// OpenSSL for the harness's own baseline (RawECDSA): what `openssl speed` measures, beside
// the gateway's verifier. Its own module name, since the main package's COpenSSL is not a
// product and two packages may not both declare a target of one name.
// As in the main package, deprecated OpenSSL APIs do not compile here.
#define OPENSSL_NO_DEPRECATED
#include <openssl/bio.h>
#include <openssl/bn.h>
#include <openssl/ecdsa.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/x509.h>
#endif
