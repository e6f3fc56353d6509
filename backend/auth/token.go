package auth

import (
	"crypto/rand"
	"crypto/sha1"
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"math/big"
	"strings"
)

// TokenPrefix starts every token value, so that leaked tokens are easy to recognise.
const TokenPrefix = "adk_"

const base62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"

// RandomString returns n characters of base62 from the system's secure random source.
func RandomString(n int) string {
	b := make([]byte, n)
	limit := big.NewInt(int64(len(base62)))
	for i := range b {
		v, err := rand.Int(rand.Reader, limit)
		if err != nil {
			panic("crypto/rand failed: " + err.Error()) // the OS has no randomness left; nothing sensible to do
		}
		b[i] = base62[v.Int64()]
	}
	return string(b)
}

// NewTokenValue returns a fresh token value: the prefix and 40 random base62 characters.
func NewTokenValue() string { return TokenPrefix + RandomString(40) }

// HashToken is how a token value is stored and looked up: its SHA-256.
func HashToken(value string) []byte {
	h := sha256.Sum256([]byte(value))
	return h[:]
}

// LooksLikeToken tells whether value has the token format, to reject junk before a lookup.
func LooksLikeToken(value string) bool {
	if !strings.HasPrefix(value, TokenPrefix) || len(value) < len(TokenPrefix)+32 || len(value) > 200 {
		return false
	}
	for _, r := range value[len(TokenPrefix):] {
		if !strings.ContainsRune(base62, r) {
			return false
		}
	}
	return true
}

// TokenHint is the part of a value shown in token lists: the prefix and 4 characters.
func TokenHint(value string) string { return value[:len(TokenPrefix)+4] }

// AgentDigest is the X-Task-Authorization value of a project: hex SHA-1 of the project
// id followed by the project's secret. It is also SERVICE_API_TOKEN.
func AgentDigest(projectID, secret string) string {
	h := sha1.Sum([]byte(projectID + secret))
	return hex.EncodeToString(h[:])
}

// DigestMatches compares a presented digest with the expected one in constant time.
func DigestMatches(presented, expected string) bool {
	return subtle.ConstantTimeCompare([]byte(strings.ToLower(presented)), []byte(expected)) == 1
}
