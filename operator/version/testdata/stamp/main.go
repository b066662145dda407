// Command stamp prints the build stamp; version_test.go builds it with -ldflags -X to prove the stamp can be set.
package main

import (
	"fmt"

	"github.com/kyma-project/kim/operator/version"
)

func main() { fmt.Println(version.Get().String()) }
