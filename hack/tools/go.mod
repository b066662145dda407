// Development tools, pinned by version in their own module so that their dependencies
// (golangci-lint pulls in a great many) never move the operator's own Kubernetes versions.
module github.com/kyma-project/kim/hack/tools

go 1.26.5
