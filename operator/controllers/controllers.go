// Package controllers lists the operator's controllers by name: the composition root (operator/app) sets up those
// the --controllers flag selects, all by default, in this order, each with its package's AddToManager and Deps. The
// shoot reaper (shootreaper) has no name here: it is set up with the Runtime controller (kymaruntime.Name).
package controllers

import (
	"fmt"
	"slices"

	"github.com/kyma-project/kim/operator/controllers/auditlogpool"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/operator/controllers/registrycachesync"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
)

// Names lists the controllers' names in set-up order.
func Names() []string {
	return []string{gardenercluster.Name, kymaruntime.Name, serviceaccountkubeconfig.Name, registrycachesync.Name, auditlogpool.Name}
}

// Select returns the named controllers' names in set-up order; no names select all of them. An unknown name is an
// error.
func Select(names []string) ([]string, error) {
	all := Names()
	if len(names) == 0 {
		return all, nil
	}
	for _, n := range names {
		if !slices.Contains(all, n) {
			return nil, fmt.Errorf("unknown controller %q (known: %v)", n, all)
		}
	}
	var out []string
	for _, n := range all {
		if slices.Contains(names, n) {
			out = append(out, n)
		}
	}
	return out, nil
}
