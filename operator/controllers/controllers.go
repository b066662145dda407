// Package controllers composes the operator: the manager binary, the sandbox and the end-to-end tests start the
// same list of controllers.
package controllers

import (
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers/auditlog"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
	"github.com/kyma-project/kim/operator/controllers/registrycache"
	"github.com/kyma-project/kim/operator/controllers/runtime"
)

// All returns new instances of every controller of the operator, in the order they are set up.
func All() []app.Controller {
	return []app.Controller{&gardenercluster.Controller{}, &runtime.Controller{}, &registrycache.Controller{}, &auditlog.Controller{}}
}
