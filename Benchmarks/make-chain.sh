#!/bin/sh
# Builds a test chain shaped like Apple's App Store signing chain, with the openssl CLI:
#   root (P-384, self-signed) -> intermediate (P-384, OID 1.2.840.113635.100.6.2.1)
#   -> leaf (P-256, OID 1.2.840.113635.100.6.11.1, certificate policies and AIA like Apple's).
# The extensions make the certificates about as large as Apple's (x5c of ~1.4, 1.1, 0.8 KB),
# so signed notifications have realistic sizes. NOT Apple's: trusted only through `trust-root`.
# Usage: make-chain.sh OUTDIR   (writes root.pem intermediate.pem leaf.pem leaf-key.pem)
set -eu
out=${1:?usage: make-chain.sh OUTDIR}
mkdir -p "$out"
cd "$out"
[ -f leaf-key.pem ] && [ -f leaf.pem ] && exit 0

cat > ext.cnf <<'CNF'
[root]
basicConstraints = critical, CA:TRUE
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
[intermediate]
basicConstraints = critical, CA:TRUE, pathlen:0
keyUsage = critical, keyCertSign, cRLSign
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = OCSP;URI:http://ocsp.bench.invalid/ocsp03-benchroot
crlDistributionPoints = URI:http://crl.bench.invalid/benchroot.crl
1.2.840.113635.100.6.2.1 = ASN1:NULL
[leaf]
basicConstraints = critical, CA:FALSE
keyUsage = critical, digitalSignature
subjectKeyIdentifier = hash
authorityKeyIdentifier = keyid
authorityInfoAccess = caIssuers;URI:http://certs.bench.invalid/wwdrg6.der, OCSP;URI:http://ocsp.bench.invalid/ocsp03-wwdrg602
certificatePolicies = @policy
1.2.840.113635.100.6.11.1 = ASN1:NULL
[policy]
policyIdentifier = 1.2.840.113635.100.5.6.1
CPS.1 = http://bench.invalid/certificateauthority/
userNotice.1 = @notice
[notice]
explicitText = "Reliance on this certificate by any party assumes acceptance of the then applicable standard terms and conditions of use, certificate policy and certification practice statements."
CNF

openssl ecparam -name secp384r1 -genkey -noout -out root-key.pem
openssl req -new -x509 -sha384 -key root-key.pem -days 3650 -out root.pem \
    -subj "/CN=StoreRelay Bench Root CA - G3/OU=Bench Certification Authority/O=StoreRelay Bench/C=US" \
    -extensions root -config ext.cnf

openssl ecparam -name secp384r1 -genkey -noout -out intermediate-key.pem
openssl req -new -sha384 -key intermediate-key.pem -out intermediate.csr \
    -subj "/CN=Bench Worldwide Developer Relations Certification Authority/OU=G6/O=StoreRelay Bench/C=US" \
    -config ext.cnf
openssl x509 -req -sha384 -in intermediate.csr -CA root.pem -CAkey root-key.pem -CAcreateserial \
    -days 3000 -out intermediate.pem -extfile ext.cnf -extensions intermediate

openssl ecparam -name prime256v1 -genkey -noout -out leaf-ec.pem
openssl pkcs8 -topk8 -nocrypt -in leaf-ec.pem -out leaf-key.pem
openssl req -new -sha256 -key leaf-key.pem -out leaf.csr \
    -subj "/CN=Bench ECC Mac App Store and iTunes Store Receipt Signing/OU=StoreRelay Bench Worldwide Developer Relations/O=StoreRelay Bench/C=US" \
    -config ext.cnf
openssl x509 -req -sha384 -in leaf.csr -CA intermediate.pem -CAkey intermediate-key.pem -CAcreateserial \
    -days 700 -out leaf.pem -extfile ext.cnf -extensions leaf
# Certificates start "now"; the benchmark signs with signedDate = now, inside every validity.
openssl verify -CAfile root.pem -untrusted intermediate.pem leaf.pem >/dev/null
rm -f ./*.csr ./*.srl leaf-ec.pem
