package app

// Controllers returns every controller of the operator, in the order they are registered. Controller packages
// import app (for Options), so they register themselves here through Register to avoid an import cycle.
func Controllers() []Controller {
	return append([]Controller(nil), registered...)
}

var registered []Controller

// Register adds a controller to Controllers; controller packages call it from an init function.
func Register(c Controller) { registered = append(registered, c) }
