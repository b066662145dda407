// Package controllers lists the operator's controllers: the composition root (operator/app) sets up those the
// --controllers flag selects, all by default, in this order.
package controllers

import (
	"fmt"
	"slices"

	"github.com/kyma-project/kim/operator/controllers/auditlog"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/kymaruntime"
	"github.com/kyma-project/kim/operator/controllers/registrycache"
	"github.com/kyma-project/kim/operator/controllers/serviceaccountkubeconfig"
	"github.com/kyma-project/kim/operator/controllers/setup"
)

// All returns new instances of every controller of the operator, in the order they are set up.
func All() []setup.Controller {
	return []setup.Controller{&gardenercluster.Controller{}, &kymaruntime.Controller{}, &serviceaccountkubeconfig.Controller{},
		registrycache.Controller{}, auditlog.Controller{}}
}

// Names lists the controllers' names in set-up order.
func Names() []string {
	var out []string
	for _, c := range All() {
		out = append(out, c.Name())
	}
	return out
}

// Select returns the named controllers in set-up order; no names select all of them. An unknown name is an error.
func Select(names []string) ([]setup.Controller, error) {
	all := All()
	if len(names) == 0 {
		return all, nil
	}
	for _, n := range names {
		if !slices.Contains(Names(), n) {
			return nil, fmt.Errorf("unknown controller %q (known: %v)", n, Names())
		}
	}
	var out []setup.Controller
	for _, c := range all {
		if slices.Contains(names, c.Name()) {
			out = append(out, c)
		}
	}
	return out, nil
}
