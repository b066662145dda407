package app

// Controllers returns every controller of the operator, in the order they are registered.
func Controllers() []Controller {
	return nil
}
