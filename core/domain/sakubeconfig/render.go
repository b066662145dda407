package sakubeconfig

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
)

// Render returns the kubeconfig of sa in runtime runtimeID: the API server and CA of e, the token, and a context
// whose default namespace is the ServiceAccount's. It is YAML (every value a double-quoted scalar, so no token or
// address can break the document) with a non-empty current-context, certificate-authority-data and server, like
// the admin kubeconfigs consumers already read.
func Render(e Endpoint, runtimeID string, sa ServiceAccount, token string) []byte {
	q := func(s string) string {
		b, _ := json.Marshal(s) // a JSON string is a valid YAML double-quoted scalar; marshalling a string cannot fail
		return string(b)
	}
	user := sa.Username()
	ctx := sa.Name + "@" + runtimeID
	var b bytes.Buffer
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\ncurrent-context: %s\n", q(ctx))
	fmt.Fprintf(&b, "clusters:\n- name: %s\n  cluster:\n    server: %s\n    certificate-authority-data: %s\n",
		q(runtimeID), q(e.Server), q(base64.StdEncoding.EncodeToString(e.CAData)))
	fmt.Fprintf(&b, "contexts:\n- name: %s\n  context:\n    cluster: %s\n    user: %s\n    namespace: %s\n",
		q(ctx), q(runtimeID), q(user), q(sa.Namespace))
	fmt.Fprintf(&b, "users:\n- name: %s\n  user:\n    token: %s\n", q(user), q(token))
	return b.Bytes()
}
