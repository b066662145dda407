package shoot

import (
	"regexp"
	"strconv"
	"strings"
)

var kubernetesVersionPattern = regexp.MustCompile(`^[0-9]+\.[0-9]+(\.[0-9]+)?$`)

// compareVersions compares dotted versions part by part, numerically where both parts are numbers
// and as text otherwise; a missing part counts as 0, so "1.33" < "1.33.4". Versions such as
// machine images ("1592.1.0") and Kubernetes ("1.33.2") both follow this shape.
func compareVersions(a, b string) int {
	pa, pb := strings.Split(a, "."), strings.Split(b, ".")
	for i := range max(len(pa), len(pb)) {
		x, y := "0", "0"
		if i < len(pa) {
			x = pa[i]
		}
		if i < len(pb) {
			y = pb[i]
		}
		nx, ex := strconv.ParseUint(x, 10, 64)
		ny, ey := strconv.ParseUint(y, 10, 64)
		switch {
		case ex == nil && ey == nil:
			if nx != ny {
				if nx < ny {
					return -1
				}
				return 1
			}
		default:
			if c := strings.Compare(x, y); c != 0 {
				return c
			}
		}
	}
	return 0
}

// notLower returns desired unless current is at least as high: updates never downgrade, and an
// equal but more precise current version ("1.33.4" vs "1.33") is kept rather than re-resolved.
func notLower(desired, current string) string {
	if current == "" {
		return desired
	}
	if desired == "" || compareVersions(current, desired) >= 0 {
		return current
	}
	return desired
}
