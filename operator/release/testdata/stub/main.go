// Command stub stands in for the kim CLI in TestGoreleaserSnapshot: it builds in seconds for every platform of
// .goreleaser.yaml and prints the version stamp the build's ldflags set, one variable a line.
package main

import (
	"fmt"

	"github.com/kyma-project/kim/operator/version"
)

func main() {
	fmt.Printf("Version=%s\nGitCommit=%s\nBranch=%s\n", version.Version, version.GitCommit, version.Branch)
}
