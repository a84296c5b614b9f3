#ifndef STORERELAY_FUZZ_OPENSSL_H
#define STORERELAY_FUZZ_OPENSSL_H
// OpenSSL for FuzzES256Verdict's reference verdict, beside the gateway's verifier. Its own
// module name: the main package's COpenSSL is not a product. As in the main package,
// deprecated OpenSSL APIs do not compile here.
#define OPENSSL_NO_DEPRECATED
#include <openssl/bio.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#endif
