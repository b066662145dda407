package gardener

import (
	"errors"
	"fmt"
	"testing"

	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/apimachinery/pkg/runtime/schema"
	"k8s.io/apimachinery/pkg/util/validation/field"

	"github.com/kyma-project/kim/core/ports"
)

func TestClassifyIssueError(t *testing.T) {
	shoots := schema.GroupResource{Group: "core.gardener.cloud", Resource: "shoots"}
	kind := schema.GroupKind{Group: "authentication.gardener.cloud", Kind: "AdminKubeconfigRequest"}
	cases := []struct {
		reason string
		err    error
		want   error
	}{
		{reason: "shoot does not exist", err: apierrors.NewNotFound(shoots, "abc1234"), want: ports.ErrShootNotFound},
		{reason: "missing RBAC", err: apierrors.NewForbidden(shoots, "abc1234", errors.New("no")), want: ports.ErrForbidden},
		{reason: "expired credentials", err: apierrors.NewUnauthorized("token expired"), want: ports.ErrForbidden},
		{
			reason: "shoot without advertised address (being created)",
			err: apierrors.NewInvalid(kind, "abc1234", field.ErrorList{field.Invalid(field.NewPath("status", "status"), nil,
				"no suitable advertised address for kube-apiserver found in .status.advertisedAddresses")}),
			want: ports.ErrShootNotReady,
		},
		{
			reason: "shoot without client CA yet",
			err:    apierrors.NewInternalError(fmt.Errorf("could not get client CA secret: not found")),
			want:   ports.ErrShootNotReady,
		},
		{reason: "apiserver overloaded", err: apierrors.NewTooManyRequests("slow down", 1), want: ports.ErrTransient},
		{reason: "connection refused", err: errors.New("dial tcp: connection refused"), want: ports.ErrTransient},
		{reason: "other internal error", err: apierrors.NewInternalError(errors.New("etcd timeout")), want: ports.ErrTransient},
	}
	for _, tc := range cases {
		t.Run(tc.reason, func(t *testing.T) {
			got := classifyIssueError(tc.err)
			if !errors.Is(got, tc.want) {
				t.Errorf("%s: classifyIssueError(%v) = %v, want %v", tc.reason, tc.err, got, tc.want)
			}
			if !errors.Is(got, tc.err) {
				t.Errorf("%s: classified error lost the original error", tc.reason)
			}
		})
	}
}
