package usecase_test

import (
	"fmt"

	"github.com/kyma-project/kim/core/domain/kubeconfig"
)

func splitKey(key string) (string, string) {
	for i := range key {
		if key[i] == '/' {
			return key[:i], key[i+1:]
		}
	}
	return "", key
}

// checkSecrets verifies invariant 7: no Secret is written or deleted that is not owned by the GardenerCluster
// acting; a Secret that did not exist is created only as kubeconfig-<name of the GardenerCluster> (any other name
// is someone else's to create: another runtime's kubeconfig, another team's Secret); and no kubeconfig is written
// of a shoot that does not name the GardenerCluster's runtime. It reads the store's change log from index from and
// returns the new end.
func (w *world) checkSecrets(from int) (int, error) {
	if w.issuedWrong != nil {
		return 0, w.issuedWrong
	}
	changes := w.store.Changes()
	for _, c := range changes[from:] {
		ref := c.Ref.Namespace + "/" + c.Ref.Name
		o, existed := w.origins[ref]
		if c.Before == nil {
			existed = false
		}
		actorNS, actorName := splitKey(w.actor)
		allowed := false
		switch {
		case w.actor == "":
			allowed = false
		case c.Op == "Write" && c.Writer != w.actor:
			return 0, fmt.Errorf("GardenerCluster %s acted, but Secret %s was written for %s", w.actor, ref, c.Writer)
		case !existed:
			allowed = c.Op == "Write" && c.Ref.Namespace == actorNS && c.Ref.Name == kubeconfig.SecretName(actorName)
		case o.kind == "operator", o.kind == "older":
			allowed = o.owner == w.actor
		case o.kind == "legacy":
			allowed = c.Op != "Delete" && o.owner == actorName && c.Ref.Namespace == actorNS && c.Ref.Name == kubeconfig.SecretName(actorName)
		}
		if !allowed {
			return 0, fmt.Errorf("Secret %s (%s of %q) changed by %s acting for GardenerCluster %q", ref, o.kind, o.owner, c.Op, w.actor)
		}
		switch c.Op {
		case "Write":
			w.origins[ref] = origin{kind: "operator", owner: w.actor}
		case "Delete":
			delete(w.origins, ref)
		}
	}
	return len(changes), nil
}
