package registrycachesync

import (
	"crypto/sha256"
	"crypto/x509"
	"encoding/hex"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
)

// Trust says which element of X-Forwarded-Client-Cert the listener believes. Envoy (Istio's proxy) forms the header
// as a list of elements separated by ',', one per proxy that verified a client certificate, each a list of
// Key=Value pairs separated by ';' (keys By, Hash, Cert, Chain, Subject, URI, DNS; a value holding ',', ';' or '='
// is double-quoted, a '"' inside it escaped as '\"'). A proxy that forwards (APPEND_FORWARD) adds its element at the
// end; one that sanitizes (SANITIZE_SET, lifecycle-manager's watcher gateway) drops what came in and writes only its
// own. Whatever a caller sends stays in front of what the proxies after it append: only the last elements are the
// proxies' own, so the listener reads the certificate from the element the trusted hop wrote, never from the first.
type Trust struct {
	// GatewayPrincipal is the Istio principal of the ingress gateway the Runtime Watcher's requests come through
	// (<trust domain>/ns/<namespace>/sa/<service account>): with OperatorPrincipal set, the operator's sidecar must
	// have verified exactly this peer.
	GatewayPrincipal string
	// OperatorPrincipal is the operator pod's own Istio principal, set when the pod runs an Istio sidecar. Then the
	// last element is the one the sidecar appended for the gateway's mTLS connection (By = this principal, URI = the
	// gateway's) and the certificate is in the element before it, the gateway's. Empty: no sidecar; the last element
	// is the gateway's own, and only the NetworkPolicy keeps everyone else from the port.
	OperatorPrincipal string
}

// xfccElement is one proxy's element: its keys (lower case, as Envoy's keys are case-insensitive) and their values,
// unquoted, in order.
type xfccElement map[string][]string

// spiffe is the URI Istio puts into a workload certificate for principal.
func spiffe(principal string) string { return "spiffe://" + principal }

// clientCertificate is the certificate the trusted hop put into X-Forwarded-Client-Cert, and a key of its source
// (the certificate's SHA-256) for the per-source limit.
func (t Trust) clientCertificate(h http.Header) (*x509.Certificate, string, error) {
	values := h.Values(XFCCHeader)
	switch {
	case len(values) == 0:
		return nil, "", errors.New("no client certificate: the " + XFCCHeader + " header is missing")
	case len(values) > 1:
		// Envoy writes one header line; a second one is a caller's.
		return nil, "", errors.New("more than one " + XFCCHeader + " header")
	case len(values[0]) > maxXFCCBytes:
		return nil, "", fmt.Errorf("the %s header exceeds %d bytes", XFCCHeader, maxXFCCBytes)
	}
	elements, err := parseXFCC(values[0])
	if err != nil {
		return nil, "", err
	}
	trusted, err := t.trustedElement(elements)
	if err != nil {
		return nil, "", err
	}
	cert, err := certificateOf(trusted)
	if err != nil {
		return nil, "", err
	}
	sum := sha256.Sum256(cert.Raw)
	return cert, hex.EncodeToString(sum[:]), nil
}

// trustedElement is the element the gateway wrote: with a sidecar the one before the sidecar's own (last) element,
// which must name this pod (By) and the gateway as the verified peer (URI); without one the last element.
func (t Trust) trustedElement(elements []xfccElement) (xfccElement, error) {
	last := elements[len(elements)-1]
	if t.OperatorPrincipal == "" {
		return last, nil
	}
	if !only(last["by"], spiffe(t.OperatorPrincipal)) {
		return nil, errors.New("the last " + XFCCHeader + " element is not this pod's sidecar's")
	}
	if !only(last["uri"], spiffe(t.GatewayPrincipal)) {
		return nil, errors.New("the request did not come through the ingress gateway")
	}
	if len(elements) < 2 {
		return nil, errors.New("no " + XFCCHeader + " element of the ingress gateway")
	}
	return elements[len(elements)-2], nil
}

// only tells whether values is exactly [want].
func only(values []string, want string) bool { return len(values) == 1 && values[0] == want }

// certificateOf parses the one certificate of an element (URL-encoded PEM).
func certificateOf(e xfccElement) (*x509.Certificate, error) {
	certs := e["cert"]
	switch {
	case len(certs) == 0 || certs[0] == "":
		return nil, errors.New("no client certificate in the trusted " + XFCCHeader + " element")
	case len(certs) > 1:
		return nil, errors.New("more than one client certificate in the trusted " + XFCCHeader + " element")
	}
	decoded, err := url.QueryUnescape(certs[0])
	if err != nil {
		return nil, errors.New("the client certificate is not URL-encoded")
	}
	block, rest := pem.Decode([]byte(decoded))
	if block == nil || block.Type != "CERTIFICATE" || strings.TrimSpace(string(rest)) != "" {
		return nil, errors.New("the client certificate is not one PEM certificate")
	}
	cert, err := x509.ParseCertificate(block.Bytes)
	if err != nil {
		return nil, errors.New("the client certificate does not parse")
	}
	return cert, nil
}

// parseXFCC splits the header into elements and pairs, honouring double quotes (',', ';' and '=' inside them are
// data; '\' escapes the next character).
func parseXFCC(v string) ([]xfccElement, error) {
	var (
		elements []xfccElement
		cur      = xfccElement{}
		key, val strings.Builder
		inKey    = true
		quoted   bool
	)
	endPair := func() error {
		k := strings.ToLower(strings.TrimSpace(key.String()))
		if k == "" && inKey && val.Len() == 0 {
			return nil // an empty pair, e.g. after a trailing ';'
		}
		if k == "" || inKey {
			return fmt.Errorf("an %s pair without a key or '='", XFCCHeader)
		}
		cur[k] = append(cur[k], val.String())
		key.Reset()
		val.Reset()
		inKey = true
		return nil
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch {
		case quoted && c == '\\' && i+1 < len(v):
			i++
			val.WriteByte(v[i])
		case quoted && c == '"':
			quoted = false
		case quoted:
			val.WriteByte(c)
		case c == '"' && !inKey:
			quoted = true
		case c == '=' && inKey:
			inKey = false
		case c == ';' || c == ',':
			if err := endPair(); err != nil {
				return nil, err
			}
			if c == ',' {
				if len(cur) == 0 {
					return nil, errors.New("an empty " + XFCCHeader + " element")
				}
				elements, cur = append(elements, cur), xfccElement{}
			}
		case inKey:
			key.WriteByte(c)
		default:
			val.WriteByte(c)
		}
	}
	if quoted {
		return nil, errors.New("an unterminated quote in " + XFCCHeader)
	}
	if err := endPair(); err != nil {
		return nil, err
	}
	if len(cur) == 0 {
		return nil, errors.New("an empty " + XFCCHeader + " element")
	}
	return append(elements, cur), nil
}
