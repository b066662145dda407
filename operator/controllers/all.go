// Package controllers lists the operator's controllers. It exists because a controller package implements
// app.Controller and so imports operator/app; app therefore cannot list the controllers itself without an import
// cycle.
package controllers

import (
	"github.com/kyma-project/kim/operator/app"
	"github.com/kyma-project/kim/operator/controllers/gardenercluster"
)

// All returns every controller of the operator, in the order they are registered.
func All() []app.Controller {
	return append(app.Controllers(), gardenercluster.Controller{})
}
