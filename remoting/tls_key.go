package remoting

// Encrypted private keys (tls.server.keyPassword, tls.client.keyPassword):
// PKCS#8 EncryptedPrivateKeyInfo, the "ENCRYPTED PRIVATE KEY" PEM block
// that `openssl pkcs8 -topk8` writes and Netty reads.
//
//	EncryptedPrivateKeyInfo ::= SEQUENCE {
//	    encryptionAlgorithm  AlgorithmIdentifier,  -- scheme OID, parameters
//	    encryptedData        OCTET STRING }
//
// Schemes read:
//   - PBES2 (RFC 8018): PBKDF2 with HMAC-SHA1/224/256/384/512, then
//     AES-128/192/256-CBC or DES-EDE3-CBC (openssl pkcs8 -v2 ..., the
//     default of OpenSSL 3);
//   - PKCS#12 PBE (RFC 7292 appendix C) with SHA-1: 128- and 40-bit RC4,
//     3-key and 2-key triple DES (openssl pkcs8 -v1 PBE-SHA1-RC4-128, as
//     Apache's TLS guide makes them; PBE-SHA1-3DES).

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/des"
	"crypto/pbkdf2"
	"crypto/rc4"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/sha512"
	"crypto/tls"
	"crypto/x509"
	"encoding/asn1"
	"encoding/pem"
	"errors"
	"fmt"
	"hash"
	"os"
	"unicode/utf16"
)

var (
	oidPBES2  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 13}
	oidPBKDF2 = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 5, 12}

	oidHMACSHA1   = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 7}
	oidHMACSHA224 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 8}
	oidHMACSHA256 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 9}
	oidHMACSHA384 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 10}
	oidHMACSHA512 = asn1.ObjectIdentifier{1, 2, 840, 113549, 2, 11}

	oidAES128CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 2}
	oidAES192CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 22}
	oidAES256CBC  = asn1.ObjectIdentifier{2, 16, 840, 1, 101, 3, 4, 1, 42}
	oidDESEDE3CBC = asn1.ObjectIdentifier{1, 2, 840, 113549, 3, 7}

	oidPBESHA1RC4128  = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 1}
	oidPBESHA1RC440   = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 2}
	oidPBESHA13DES    = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 3}
	oidPBESHA12KeyDES = asn1.ObjectIdentifier{1, 2, 840, 113549, 1, 12, 1, 4}
)

// maxKeyIterations bounds a key derivation's iteration count (OpenSSL
// writes 2,048; a corrupt file must not hang the start).
const maxKeyIterations = 10_000_000

var errKeyPassword = errors.New("wrong key password or corrupt encrypted key")

type encryptedPrivateKeyInfo struct {
	Algo algorithmIdentifier
	Data []byte
}

// algorithmIdentifier is pkix.AlgorithmIdentifier with its parameters
// kept whole.
type algorithmIdentifier struct {
	Algorithm  asn1.ObjectIdentifier
	Parameters asn1.RawValue `asn1:"optional"`
}

type pbes2Params struct {
	KDF    algorithmIdentifier
	Scheme algorithmIdentifier
}

type pbkdf2Params struct {
	Salt       []byte
	Iterations int
	KeyLength  int                 `asn1:"optional"`
	PRF        algorithmIdentifier `asn1:"optional"`
}

type pkcs12PBEParams struct {
	Salt       []byte
	Iterations int
}

// loadKeyPair reads a certificate chain and its key; an encrypted key is
// decrypted with password.
func loadKeyPair(certPath, keyPath, password string) (tls.Certificate, error) {
	certPEM, err := os.ReadFile(certPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyPEM, err := os.ReadFile(keyPath)
	if err != nil {
		return tls.Certificate{}, err
	}
	if block, _ := pem.Decode(keyPEM); block != nil && block.Type == "ENCRYPTED PRIVATE KEY" {
		if password == "" {
			return tls.Certificate{}, fmt.Errorf("%s is encrypted and no key password is set", keyPath)
		}
		der, err := decryptPKCS8(block.Bytes, []byte(password), maxKeyIterations)
		if err != nil {
			return tls.Certificate{}, fmt.Errorf("%s: %w", keyPath, err)
		}
		keyPEM = pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})
	}
	return tls.X509KeyPair(certPEM, keyPEM)
}

// decryptPKCS8 returns the PKCS#8 PrivateKeyInfo DER inside an
// EncryptedPrivateKeyInfo, checked to parse.
func decryptPKCS8(der, password []byte, maxIter int) ([]byte, error) {
	var info encryptedPrivateKeyInfo
	if rest, err := asn1.Unmarshal(der, &info); err != nil || len(rest) > 0 {
		return nil, errors.New("not a PKCS#8 encrypted private key")
	}
	var plain []byte
	var err error
	switch {
	case info.Algo.Algorithm.Equal(oidPBES2):
		plain, err = decryptPBES2(info.Algo.Parameters.FullBytes, info.Data, password, maxIter)
	default:
		plain, err = decryptPKCS12PBE(info.Algo.Algorithm, info.Algo.Parameters.FullBytes, info.Data, password, maxIter)
	}
	if err != nil {
		return nil, err
	}
	if _, err := x509.ParsePKCS8PrivateKey(plain); err != nil {
		return nil, errKeyPassword
	}
	return plain, nil
}

func decryptPBES2(params, data, password []byte, maxIter int) ([]byte, error) {
	var p pbes2Params
	if rest, err := asn1.Unmarshal(params, &p); err != nil || len(rest) > 0 || !p.KDF.Algorithm.Equal(oidPBKDF2) {
		return nil, errors.New("PBES2: unsupported key derivation (only PBKDF2)")
	}
	var kp pbkdf2Params
	if rest, err := asn1.Unmarshal(p.KDF.Parameters.FullBytes, &kp); err != nil || len(rest) > 0 {
		return nil, errors.New("PBES2: bad PBKDF2 parameters")
	}
	if kp.Iterations < 1 || kp.Iterations > maxIter {
		return nil, fmt.Errorf("PBES2: iteration count %d out of range", kp.Iterations)
	}
	prf := sha1.New
	switch alg := kp.PRF.Algorithm; {
	case len(alg) == 0 || alg.Equal(oidHMACSHA1):
	case alg.Equal(oidHMACSHA224):
		prf = sha256.New224
	case alg.Equal(oidHMACSHA256):
		prf = sha256.New
	case alg.Equal(oidHMACSHA384):
		prf = sha512.New384
	case alg.Equal(oidHMACSHA512):
		prf = sha512.New
	default:
		return nil, fmt.Errorf("PBES2: unsupported PRF %v", alg)
	}
	var keyLen int
	var newBlock func([]byte) (cipher.Block, error)
	switch alg := p.Scheme.Algorithm; {
	case alg.Equal(oidAES128CBC):
		keyLen, newBlock = 16, aes.NewCipher
	case alg.Equal(oidAES192CBC):
		keyLen, newBlock = 24, aes.NewCipher
	case alg.Equal(oidAES256CBC):
		keyLen, newBlock = 32, aes.NewCipher
	case alg.Equal(oidDESEDE3CBC):
		keyLen, newBlock = 24, des.NewTripleDESCipher
	default:
		return nil, fmt.Errorf("PBES2: unsupported cipher %v", alg)
	}
	var iv []byte
	if rest, err := asn1.Unmarshal(p.Scheme.Parameters.FullBytes, &iv); err != nil || len(rest) > 0 {
		return nil, errors.New("PBES2: bad IV")
	}
	key, err := pbkdf2.Key(prf, string(password), kp.Salt, kp.Iterations, keyLen)
	if err != nil {
		return nil, fmt.Errorf("PBES2: %w", err)
	}
	return decryptCBC(newBlock, key, iv, data)
}

func decryptPKCS12PBE(alg asn1.ObjectIdentifier, params, data, password []byte, maxIter int) ([]byte, error) {
	var keyLen int
	switch {
	case alg.Equal(oidPBESHA1RC4128):
		keyLen = 16
	case alg.Equal(oidPBESHA1RC440):
		keyLen = 5
	case alg.Equal(oidPBESHA13DES), alg.Equal(oidPBESHA12KeyDES):
		keyLen = 24
	default:
		return nil, fmt.Errorf("unsupported key encryption %v", alg)
	}
	var p pkcs12PBEParams
	if rest, err := asn1.Unmarshal(params, &p); err != nil || len(rest) > 0 {
		return nil, errors.New("PKCS#12 PBE: bad parameters")
	}
	if p.Iterations < 1 || p.Iterations > maxIter {
		return nil, fmt.Errorf("PKCS#12 PBE: iteration count %d out of range", p.Iterations)
	}
	bmp := bmpPassword(password)
	if alg.Equal(oidPBESHA12KeyDES) {
		key := pkcs12KDF(sha1.New, 64, bmp, p.Salt, p.Iterations, 1, 16)
		key = append(key, key[:8]...) // K1 K2 K1
		iv := pkcs12KDF(sha1.New, 64, bmp, p.Salt, p.Iterations, 2, 8)
		return decryptCBC(des.NewTripleDESCipher, key, iv, data)
	}
	key := pkcs12KDF(sha1.New, 64, bmp, p.Salt, p.Iterations, 1, keyLen)
	if keyLen == 24 {
		iv := pkcs12KDF(sha1.New, 64, bmp, p.Salt, p.Iterations, 2, 8)
		return decryptCBC(des.NewTripleDESCipher, key, iv, data)
	}
	c, err := rc4.NewCipher(key)
	if err != nil {
		return nil, err
	}
	out := make([]byte, len(data))
	c.XORKeyStream(out, data)
	return out, nil
}

// decryptCBC decrypts data and strips its PKCS#7 padding.
func decryptCBC(newBlock func([]byte) (cipher.Block, error), key, iv, data []byte) ([]byte, error) {
	b, err := newBlock(key)
	if err != nil {
		return nil, err
	}
	bs := b.BlockSize()
	if len(iv) != bs || len(data) == 0 || len(data)%bs != 0 {
		return nil, errKeyPassword
	}
	out := make([]byte, len(data))
	cipher.NewCBCDecrypter(b, iv).CryptBlocks(out, data)
	pad := int(out[len(out)-1])
	if pad == 0 || pad > bs {
		return nil, errKeyPassword
	}
	for _, v := range out[len(out)-pad:] {
		if int(v) != pad {
			return nil, errKeyPassword
		}
	}
	return out[:len(out)-pad], nil
}

// bmpPassword is the password as PKCS#12 wants it: UTF-16BE with a
// terminating zero character.
func bmpPassword(pw []byte) []byte {
	u := utf16.Encode([]rune(string(pw)))
	out := make([]byte, 0, 2*len(u)+2)
	for _, c := range u {
		out = append(out, byte(c>>8), byte(c))
	}
	return append(out, 0, 0)
}

// pkcs12KDF derives n bytes for purpose id (1 key, 2 IV) as RFC 7292
// appendix B.2 does, with hash h of block size v.
func pkcs12KDF(h func() hash.Hash, v int, password, salt []byte, iter int, id byte, n int) []byte {
	fill := func(src []byte) []byte {
		if len(src) == 0 {
			return nil
		}
		out := make([]byte, v*((len(src)+v-1)/v))
		for i := range out {
			out[i] = src[i%len(src)]
		}
		return out
	}
	D := make([]byte, v)
	for i := range D {
		D[i] = id
	}
	I := append(fill(salt), fill(password)...)
	var out []byte
	for len(out) < n {
		hh := h()
		hh.Write(D)
		hh.Write(I)
		A := hh.Sum(nil)
		for range iter - 1 {
			hh.Reset()
			hh.Write(A)
			A = hh.Sum(A[:0])
		}
		out = append(out, A...)
		if len(out) >= n {
			break
		}
		B := make([]byte, v)
		for i := range B {
			B[i] = A[i%len(A)]
		}
		for j := 0; j < len(I); j += v { // I_j = (I_j + B + 1) mod 2^(8v)
			carry := 1
			for k := v - 1; k >= 0; k-- {
				sum := int(I[j+k]) + int(B[k]) + carry
				I[j+k] = byte(sum)
				carry = sum >> 8
			}
		}
	}
	return out[:n]
}
