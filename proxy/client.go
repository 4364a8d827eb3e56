package proxy

import "strings"

// keyClientPrefix starts the client key of a request that carried an
// operator-issued API key (KeyClient).
const keyClientPrefix = "key:"

// KeyClient is the client key (Request.Client) of the API key whose
// fingerprint is fp: every request with that key is one client for the
// per-client rate, the fair share and every per-client share, on every
// replica alike, wherever it comes from.
func KeyClient(fp string) string { return keyClientPrefix + fp }

// IsKeyClient reports whether client names an API key (KeyClient), not an
// address.
func IsKeyClient(client string) bool { return strings.HasPrefix(client, keyClientPrefix) }
